// The editor's problems after an edit, in the real workbench (code-server + Chromium, its built-in
// TypeScript service) against the loopback model server: the model edits a TypeScript file into a
// type error; the call's row in the Timeline says so, its problem row names the file, line and
// message, and Enter or a click on that row opens the file at that line. Screenshots:
// test-results/screenshots/conversation-problems-{300,800}-{light,dark}.png.
import { strict as assert } from 'node:assert';
import type { FrameLocator, Page } from 'playwright-core';
import { openAgentWorkbench, phase, waitUntil } from '../support/e2e-story';
import { shots } from './first-hour-shots';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, paletteEntries, type Workbench } from '../support/workbench';

const TASK = 'Show the total of two prices';
const TOTAL = [
  '// The sum of prices.',
  'export function total(prices: number[]): number {',
  '  return prices.reduce((sum, p) => sum + p, 0);',
  '}',
  '',
];
const ADDED = 'export const shown: string = total([1, 2]);\n';
const MESSAGE = "Type 'number' is not assignable to type 'string'.";
/** A file with an error of its own: opened first, so the story knows the TypeScript service is up. */
const OLD = "export const old: number = 'one';\n";

function scriptedModel(): Promise<FakeAnthropic> {
  const turns = [
    {
      content: [
        { type: 'text' as const, text: 'I will add the shown total.' },
        {
          type: 'tool_use' as const,
          id: 'toolu_total',
          name: 'edit_file',
          input: { path: 'src/total.ts', old_string: '}\n', new_string: `}\n${ADDED}` },
        },
      ],
      stop_reason: 'tool_use',
    },
    { content: [{ type: 'text' as const, text: 'Added; the editor reports a type error I will fix next.' }], stop_reason: 'end_turn' },
  ];
  return startFakeAnthropic((request) => {
    const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? [];
    return turns[Math.min(messages.filter((m) => m.role === 'assistant').length, turns.length - 1)]!;
  });
}

/** The text of the tool_result the model received for `id`. */
function resultText(fake: FakeAnthropic, id: string): string {
  for (const request of fake.requests) {
    for (const message of (request.body as { messages?: { content: unknown }[] }).messages ?? []) {
      for (const block of Array.isArray(message.content)
        ? (message.content as { type: string; tool_use_id?: string; content?: unknown }[])
        : []) {
        if (block.type !== 'tool_result' || block.tool_use_id !== id) continue;
        if (typeof block.content === 'string') return block.content;
        return ((block.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');
      }
    }
  }
  return `(no tool_result for ${id})`;
}

function row(frame: FrameLocator, text: string | RegExp, kind: 'run' | 'step' | 'call' | 'problem') {
  return frame.locator(`[role="treeitem"].kind-${kind}`, { hasText: text }).first();
}

async function openFile(page: Page, path: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(path);
  // The list answers the query a moment later: Enter once its first entry is the file asked for.
  const name = path.slice(path.lastIndexOf('/') + 1);
  const first = page.locator('.quick-input-list .monaco-list-row').first();
  await waitUntil(`quick open to list ${name} first`, async () => ((await first.getAttribute('aria-label')) ?? '').includes(name), 20_000);
  await page.keyboard.press('Enter');
}

/** Waits until the editor shows `name` with the cursor on `line`. */
async function editorAt(page: Page, name: string, line: number): Promise<void> {
  await waitUntil(`${name} to be the active editor`, async () =>
    ((await page.locator('.tab.active').first().textContent()) ?? '').includes(name),
  );
  const cursor = page.locator('.statusbar-item', { hasText: /^Ln \d+, Col/ }).first();
  await waitUntil(`the cursor on line ${line}`, async () => ((await cursor.textContent()) ?? '').startsWith(`Ln ${line},`));
}

async function closeAllEditors(page: Page): Promise<void> {
  await paletteEntries(page, 'View: Close All Editors', 'Close All Editors');
  await page.keyboard.press('Enter');
  await waitUntil('no editor open', async () => (await page.locator('.tab').count()) === 0);
}

describe("e2e: the editor's problems after an edit, in the Timeline", function () {
  let fake: FakeAnthropic;
  let wb: Workbench;
  let frame: FrameLocator;

  before(async () => {
    fake = await scriptedModel();
    // This machine is shared and slow: a longer quiet spell than a person's default, within the longest wait.
    wb = await openAgentWorkbench(
      fake.url,
      { 'src/total.ts': TOTAL.join('\n'), 'src/old.ts': OLD },
      { 'agentCheckpoints.diagnostics.quietMs': 2000, 'agentCheckpoints.diagnostics.maxWaitMs': 30_000 },
    );
  });

  after(async () => {
    await wb?.close();
    await fake?.close();
  });

  it('shows the type error an edit made under its call, and opens it at its line', async () => {
    await phase('the TypeScript service runs in the workspace: a file with an error gets its squiggle', async () => {
      await openFile(wb.page, 'src/old.ts');
      // A cold service starts in seconds; what it reports is the sign it is up.
      await wb.page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 120_000 });
      // VS Code's TypeScript checks only the files open in a tab (unless the person turned on its
      // project diagnostics): the person has the file the agent will edit open, as they often do.
      await openFile(wb.page, 'src/total.ts');
      await editorAt(wb.page, 'total.ts', 1);
    });

    await phase('a run edits src/total.ts into a type error; the model is told, with file and line', async () => {
      frame = await openTimeline(wb.page);
      const input = frame.locator('textarea.composer-input');
      await input.fill(TASK);
      await input.press('Enter');
      const run = row(frame, TASK, 'run');
      await run.waitFor({ timeout: 30_000 });
      await waitUntil('the run to complete', async () => ((await run.getAttribute('title')) ?? '').includes('Status: completed'), 90_000);
      const told = resultText(fake, 'toolu_total');
      assert.ok(told.includes(`src/total.ts:5: error: ${MESSAGE}`), `the tool result names the error:\n${told}`);
      assert.ok(!told.includes('src/old.ts'), 'a file the call did not write is not named');
    });

    await phase("the call's row counts the problem; its problem row says file, line and message", async () => {
      await row(frame, /edit src\/total\.ts/, 'step').click();
      await wb.page.keyboard.press('ArrowRight');
      const call = row(frame, /edit src\/total\.ts/, 'call');
      await call.waitFor({ timeout: 10_000 });
      assert.ok(((await call.textContent()) ?? '').includes('1 problem'), (await call.textContent()) ?? '');
      await call.click();
      await wb.page.keyboard.press('ArrowRight');
      const problem = row(frame, 'total.ts:5', 'problem');
      await problem.waitFor({ timeout: 10_000 });
      assert.equal((await problem.locator('.meta').textContent())?.trim(), MESSAGE);
      assert.equal(await problem.getAttribute('aria-label'), `Error in src/total.ts, line 5: ${MESSAGE}`);
      const inConversation = frame.locator('.detail details.call .call-status', { hasText: '1 new problem' });
      assert.equal(await inConversation.count(), 1, "the step's conversation counts it on the call too");
      await shots(wb, 'problems', { prefix: 'conversation' });
    });

    await phase('Enter on the problem row opens src/total.ts at line 5; so does a click', async () => {
      await row(frame, /edit src\/total\.ts/, 'call').click();
      for (let i = 0; i < 4 && (await frame.locator('.row.selected.kind-problem').count()) === 0; i++)
        await wb.page.keyboard.press('ArrowDown');
      assert.equal(await frame.locator('.row.selected.kind-problem').count(), 1, 'the problem row is reached with the keyboard');
      await wb.page.keyboard.press('Enter');
      await editorAt(wb.page, 'total.ts', 5);
      console.log(`      screenshot: ${await wb.screenshot('conversation-problems-opened')}`);
      await closeAllEditors(wb.page);
      await row(frame, 'total.ts:5', 'problem').click();
      await editorAt(wb.page, 'total.ts', 5);
    });
  });
});
