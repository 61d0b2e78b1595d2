// Two first-hour journeys with a long run, in the real workbench (code-server + Chromium)
// against the loopback model server: a run that lists, finds and searches a workspace of 2,000+
// files in the editor, 60 steps long, then searched in the Timeline for the one step that read
// one file. Screenshots: test-results/screenshots/first-hour-{8,9}-*.png at 300 and 800 px,
// light and dark.
import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { phase, waitUntil } from '../support/e2e-story';
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest, type Step } from '../support/fake-anthropic/server';
import { openTimeline, openWorkbench, paletteEntries, type Workbench } from '../support/workbench';
import { setTheme, shots } from './first-hour-shots';

const TASK = 'Find where the needle is configured';
const FILES = 2_000;
const READS = 57;
const NEEDLE_FILE = 'lib/pkg-17/mod-1742.ts';
const ANSWER = 'The needle is configured in `lib/pkg-17/mod-1742.ts`, line 2.';

/** The tool results the model has seen so far: one per answered call. */
function resultsSeen(request: RecordedRequest): number {
  const messages = (request.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
  return messages.filter(
    (m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b: { type?: string }) => b.type === 'tool_result'),
  ).length;
}

function call(id: string, name: string, input: Record<string, unknown>, text?: string): Step {
  return {
    content: [...(text !== undefined ? [{ type: 'text' as const, text }] : []), { type: 'tool_use' as const, id, name, input }],
    stop_reason: 'tool_use',
  };
}

/** list_dir, find_files, search_text, then READS files read one per step, then the answer: 61 steps. */
function longRun(): Promise<FakeAnthropic> {
  return startFakeAnthropic((request) => {
    const seen = resultsSeen(request);
    if (seen === 0) return call('toolu_list', 'list_dir', { path: 'lib', depth: 1 }, 'First the layout of `lib`.');
    if (seen === 1) return call('toolu_find', 'find_files', { pattern: '**/mod-17*.ts', path: 'lib' });
    if (seen === 2) return call('toolu_search', 'search_text', { pattern: 'NEEDLE', path: 'lib' });
    if (seen < 3 + READS) {
      const n = 1700 + seen - 3;
      return call(`toolu_read_${n}`, 'read_file', { path: `lib/pkg-${Math.floor(n / 100)}/mod-${n}.ts` });
    }
    return { content: [{ type: 'text', text: ANSWER }], stop_reason: 'end_turn' };
  });
}

/** FILES files in 20 packages; one of them names the needle. */
function fillWorkspace(root: string): void {
  for (let n = 0; n < FILES; n++) {
    const dir = join(root, 'lib', `pkg-${Math.floor(n / 100)}`);
    if (n % 100 === 0) mkdirSync(dir, { recursive: true });
    const needle = `lib/pkg-${Math.floor(n / 100)}/mod-${n}.ts` === NEEDLE_FILE;
    writeFileSync(join(dir, `mod-${n}.ts`), `export const id = ${n};\n${needle ? 'export const NEEDLE = "here";\n' : ''}`);
  }
}

describe('e2e: the first hour, long runs', function () {
  let fake: FakeAnthropic;
  let wb: Workbench;
  let frame: FrameLocator;

  before(async () => {
    fake = await longRun();
    wb = await openWorkbench({
      env: { ANTHROPIC_API_KEY: 'sk-ant-e2e-not-a-real-key' },
      settings: {
        'agentCheckpoints.provider': 'anthropic',
        'agentCheckpoints.baseUrl': fake.url,
        'agentCheckpoints.model': 'claude-e2e-test',
        // 61 model calls: above the default turn limit of 50.
        'agentCheckpoints.maxTurns': 100,
      },
    });
    fillWorkspace(wb.workspace);
  });

  after(async () => {
    await wb?.close();
    await fake?.close();
  });

  it('lists, finds and searches 2,000 files in the editor; a 60-step run searched for one file; the editor tab survives a reload', async function () {
    this.timeout(900_000);
    await phase('a run over a workspace of 2,000 files lists, finds and searches it', async () => {
      frame = await openTimeline(wb.page);
      const input = frame.locator('textarea.composer-input');
      await input.click();
      await input.type(TASK);
      await input.press('Enter');
      await waitUntil('the run to complete', async () => fake.requests.length >= 4 + READS, 300_000).catch(async (error: Error) => {
        console.log(`      requests: ${fake.requests.length}; screenshot: ${await wb.screenshot('first-hour-8-stuck')}`);
        throw error;
      });
      await frame.locator('.detail .markdown', { hasText: 'line 2' }).waitFor({ timeout: 60_000 });
      const text = (i: number) => JSON.stringify(fake.requests[i]?.body ?? '');
      assert.match(text(1), /pkg-19/, 'list_dir listed the packages');
      assert.match(text(2), /mod-1742\.ts/, 'find_files found by glob');
      assert.match(text(3), /NEEDLE/, 'search_text found the needle');
      assert.doesNotMatch(text(3), /cannot be (listed|searched)/);
    });

    await phase('the Timeline of a 60-step run: pinned run header, the end in view', async () => {
      await frame.locator('.tree').evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
      await frame.locator('.sticky-run:not([hidden]) .row.kind-run', { hasText: TASK }).waitFor({ timeout: 10_000 });
      await shots(wb, '8-long-run');
    });

    await phase('searched for one file, the one step that read it shows, opened', async () => {
      await frame.locator('.tree').click();
      await wb.page.keyboard.press('Control+f');
      const find = frame.locator('input.filter-input');
      await waitUntil('the search box to have the focus', async () => find.evaluate((el) => el === document.activeElement));
      await find.type('file:mod-1742');
      await frame.locator('.filter-count', { hasText: /step/ }).waitFor({ timeout: 10_000 });
      const count = (await frame.locator('.filter-count').textContent()) ?? '';
      assert.match(count, /^1 step in 1 run$/, `count: ${count}`);
      await find.press('Enter');
      const calls = frame.locator('[role="treeitem"].kind-call');
      await calls.first().waitFor();
      const labels = await calls.allTextContents();
      assert.ok(labels.length === 1 && labels.every((l) => l.includes('mod-1742')), labels.join(' | '));
      await shots(wb, '9-searched');
      await find.press('Escape');
      await waitUntil('all steps to show again', async () => ((await frame.locator('.filter-count').textContent()) ?? '') === '');
    });

    await phase('the Timeline in an editor tab: the map and the conversation side by side', async () => {
      await paletteEntries(wb.page, 'Agent: Open Timeline in Editor', 'Open Timeline in Editor');
      await wb.page.keyboard.press('Enter');
      await wb.page.locator('.tabs-container .tab', { hasText: 'Agent Timeline' }).waitFor({ timeout: 30_000 });
      const tab = wb.page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
      await tab.locator('.row.kind-run', { hasText: TASK }).first().waitFor({ timeout: 45_000 });
      await tab.locator('.detail .markdown', { hasText: 'line 2' }).waitFor({ timeout: 30_000 });
      const [tree, detail] = await Promise.all([tab.locator('.tree').boundingBox(), tab.locator('.detail').boundingBox()]);
      assert.ok(tree && detail && detail.x >= tree.x + tree.width - 2, 'the conversation sits right of the tree');
      for (const theme of ['light', 'dark'] as const) {
        if (!(await setTheme(wb, theme))) continue;
        console.log(`      screenshot: ${await wb.screenshot(`first-hour-10-editor-tab-${theme}`)}`);
      }
    });

    await phase('the editor tab comes back after a window reload, with the runs in it', async () => {
      // Reloaded as a person does (Developer: Reload Window): the workbench saves its editors first,
      // which a browser reload of the page does not wait for.
      await paletteEntries(wb.page, 'Developer: Reload Window', 'Reload Window');
      const reloaded = wb.page.waitForEvent('load', { timeout: 60_000 });
      await wb.page.keyboard.press('Enter');
      await reloaded;
      await wb.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      await wb.page.locator('.tabs-container .tab', { hasText: 'Agent Timeline' }).waitFor({ timeout: 60_000 });
      // The tab's document is the wide one (the side bar's Timeline comes back too, 300 px wide).
      // VS Code revives the tab once the extension has activated: slow on a loaded machine.
      await waitUntil(
        'the revived tab to show the run and its answer, its icons loaded',
        async () => {
          for (const frame of wb.page.frames()) {
            const shown = await frame
              .evaluate(
                (task) =>
                  window.innerWidth >= 720 &&
                  document.fonts.status === 'loaded' &&
                  document.fonts.check('16px codicon') &&
                  [...document.querySelectorAll('.row.kind-run')].some((r) => r.textContent?.includes(task)) &&
                  [...document.querySelectorAll('.detail .markdown')].some((m) => m.textContent?.includes('line 2')),
                TASK,
              )
              .catch(() => false);
            if (shown) return true;
          }
          return false;
        },
        120_000,
      );
      console.log(`      screenshot: ${await wb.screenshot('first-hour-11-editor-tab-reloaded')}`);
    });
  });
});
