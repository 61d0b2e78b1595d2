// The run's Instructions in the real workbench: a run in a workspace with an AGENTS.md shows, in
// its first step, the system prompt it sent (version, size) and the project file it took in, with
// its hash. Screenshot: test-results/screenshots/instructions-1-entry.png (the entry open, the prompt folded).
import { SYSTEM_PROMPT_VERSION } from '../../src/core/runtime/system-prompt';
import { strict as assert } from 'node:assert';
import type { FrameLocator } from 'playwright-core';
import { openAgentWorkbench, phase, waitUntil } from '../support/e2e-story';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, type Workbench } from '../support/workbench';

const TASK = 'Say what the project asks of agents';
const AGENTS = '# Greet demo\n- Run the tests with `node test.js` after every change.\n';

describe('e2e: the Instructions entry of a run', function () {
  let fake: FakeAnthropic;
  let wb: Workbench;
  let frame: FrameLocator;

  before(async () => {
    fake = await startFakeAnthropic(() => ({
      content: [{ type: 'text', text: 'It asks to run `node test.js` after every change.' }],
      stop_reason: 'end_turn',
    }));
    wb = await openAgentWorkbench(fake.url, { 'AGENTS.md': AGENTS });
  });

  after(async () => {
    await wb?.close();
    await fake?.close();
  });

  it("shows the system prompt and AGENTS.md the run used, in the run's first step", async () => {
    await phase('a run from the composer completes', async () => {
      frame = await openTimeline(wb.page);
      const input = frame.locator('textarea.composer-input');
      await input.fill(TASK);
      await input.press('Enter');
      const run = frame.locator('[role="treeitem"].kind-run', { hasText: TASK }).first();
      await run.waitFor({ timeout: 30_000 });
      await waitUntil('the run to complete', async () => ((await run.getAttribute('title')) ?? '').includes('Status: completed'));
    });

    await phase('the first step holds the Instructions: version, size, AGENTS.md and its hash, the prompt', async () => {
      await frame
        .locator('[role="treeitem"].kind-step', { hasText: `You: ${TASK}` })
        .first()
        .click();
      const entry = frame.locator('.detail details.instructions-entry');
      await entry.waitFor({ timeout: 10_000 });
      const summary = (await entry.locator('summary').textContent()) ?? '';
      assert.match(summary, new RegExp(`^Instructions v${SYSTEM_PROMPT_VERSION} · ~[\\d.,]+k? tok · AGENTS\\.md$`));
      await entry.locator('summary').click();
      const files = (await entry.locator('.instruction-files li').allTextContents()).join('\n');
      assert.match(files, /AGENTS\.md · 0\.1 KiB · sha256 [0-9a-f]{12}/);
      await frame.locator('.detail').evaluate((detail) => (detail.scrollTop = 0));
      console.log(`      screenshot: ${await wb.screenshot('instructions-1-entry')}`);
      await entry.locator('button', { hasText: /^Show all \d+ lines/ }).click();
      const prompt = (await entry.locator('.output-text').textContent()) ?? '';
      assert.ok(prompt.includes('# How this agent works') && prompt.includes('# Environment'), prompt.slice(0, 200));
      const body = (fake.requests[0]?.body ?? {}) as { system?: { text: string }[] };
      assert.ok(body.system?.[0]?.text.includes('node test.js'), 'the model got AGENTS.md in its system prompt');
    });
  });
});
