// Inline review end to end, in the real workbench (code-server + Chromium), against the loopback
// model server: a run rewrites a file (three hunks) and edits another; the editor marks the agent's
// lines, the hover shows what it replaced, CodeLens Keep / Undo decide hunk by hunk (the person's
// own edit stays), next change goes across files, and the status bar counts what still waits.
// A second run's command makes a script executable: one change at its top, kept or undone.
// Screenshots go to test-results/screenshots/review-*.png.
import { strict as assert } from 'node:assert';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { openAgentWorkbench, phase, waitUntil } from '../support/e2e-story';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, paletteEntries, type Workbench } from '../support/workbench';

const PRICING_BEFORE = [
  "'use strict';",
  '',
  '/** Price of an order in cents. */',
  'function total(items) {',
  '  let sum = 0;',
  '  for (const item of items) sum += item.price * item.quantity;',
  '  return sum;',
  '}',
  '',
  'function count(items) {',
  '  let n = 0;',
  '  for (const item of items) n += item.quantity;',
  '  return n;',
  '}',
  '',
  'function discount(sum, code) {',
  "  if (code === 'HALF') return sum / 2;",
  '  return sum;',
  '}',
  '',
  'function shipping(sum) {',
  '  return sum > 5000 ? 0 : 499;',
  '}',
  '',
  'function tax(sum) {',
  '  const rate = 0.2;',
  '  return Math.round(sum * rate);',
  '}',
  '',
  'module.exports = { total, count, discount, shipping, tax };',
  '',
].join('\n');
const PRICING_AFTER = PRICING_BEFORE.replace(
  '  for (const item of items) sum += item.price * item.quantity;',
  '  for (const { price, quantity } of items) sum += price * quantity;',
)
  .replace(
    "  if (code === 'HALF') return sum / 2;",
    "  if (code === 'HALF') return Math.floor(sum / 2);\n  if (code === 'TENOFF') return sum - 1000;",
  )
  .replace('  const rate = 0.2;\n', '');
const PRICING_FINAL = PRICING_AFTER.replace('  return Math.round(sum * rate);', '  return Math.round(sum * 0.2);');
const CHMOD_TASK = 'Make the deploy script executable';
const GREET_OLD = '  const head = names.slice(0, names.length - 2);';
const GREET_NEW = '  const head = names.slice(0, -1);';

function toolUse(id: string, name: string, input: unknown) {
  return { type: 'tool_use' as const, id, name, input };
}

function scriptedModel(): Promise<FakeAnthropic> {
  const turns = [
    { content: [toolUse('toolu_pricing', 'write_file', { path: 'src/pricing.js', content: PRICING_FINAL })], stop_reason: 'tool_use' },
    {
      content: [toolUse('toolu_greet', 'edit_file', { path: 'src/greet.js', old_string: GREET_OLD, new_string: GREET_NEW })],
      stop_reason: 'tool_use',
    },
    { content: [{ type: 'text' as const, text: 'Done.' }], stop_reason: 'end_turn' },
  ];
  // The second run only changes the executable bit of a script, through a command.
  const chmod = [
    { content: [toolUse('toolu_chmod', 'run_command', { command: 'chmod +x deploy.sh' })], stop_reason: 'tool_use' },
    turns[2]!,
  ];
  return startFakeAnthropic((request) => {
    const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? [];
    const script = JSON.stringify(messages[0] ?? '').includes(CHMOD_TASK) ? chmod : turns;
    return script[Math.min(messages.filter((m) => m.role === 'assistant').length, script.length - 1)]!;
  });
}

async function editorText(page: Page): Promise<string> {
  return ((await page.locator('.editor-instance .view-lines').first().textContent()) ?? '').replace(/\u00a0/g, ' ');
}

async function openFile(page: Page, path: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(path);
  await page.locator('.quick-input-list .monaco-list-row').first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.editor-instance .monaco-editor').first().waitFor();
}

const statusText = async (page: Page) =>
  (
    (await page
      .locator('.statusbar-item', { hasText: /changes? to review/ })
      .first()
      .textContent({ timeout: 2_000 })
      .catch(() => '')) ?? ''
  ).trim();

const lenses = (page: Page, text: RegExp) => page.locator('.codelens-decoration a', { hasText: text });

describe('e2e: inline review in the real workbench', function () {
  let fake: FakeAnthropic;
  let wb: Workbench;

  before(async () => {
    fake = await scriptedModel();
    wb = await openAgentWorkbench(fake.url, { 'src/pricing.js': PRICING_BEFORE, 'deploy.sh': '#!/bin/sh\necho deploying\n' });
  });

  after(async () => {
    await wb?.close();
    await fake?.close();
  });

  it('marks the agent lines, keeps one hunk, undoes another around a user edit, goes to the next file', async () => {
    await phase('a run writes two files; the status bar counts the changes to review', async () => {
      await paletteEntries(wb.page, 'Agent: Run', 'Agent: Run');
      await wb.page.keyboard.press('Enter');
      const input = wb.page.locator('.quick-input-widget input');
      await input.waitFor();
      await input.fill('Tidy the pricing and fix the greeting');
      await wb.page.keyboard.press('Enter');
      await waitUntil(
        'the agent to write greet.js',
        () => readFileSync(join(wb.workspace, 'src/greet.js'), 'utf8').includes(GREET_NEW),
        60_000,
      );
      await waitUntil('the status bar count', async () => (await statusText(wb.page)).includes('4 changes to review'), 30_000);
      // The Timeline beside the editor counts them too. (In code-server a webview's first content
      // waits for its service worker, seconds on a busy machine: wait for it here, or every
      // screenshot of the story shows an empty side bar.)
      const timeline = await openTimeline(wb.page);
      await timeline.getByText('4 to review').first().waitFor({ timeout: 45_000 });
    });

    await phase('opening a file shows its marks and Keep / Undo above each hunk', async () => {
      await openFile(wb.page, 'src/pricing.js');
      await lenses(wb.page, /Keep/).nth(2).waitFor({ timeout: 20_000 });
      await wb.page.waitForTimeout(1_000);
      console.log(`      screenshot: ${await wb.screenshot('review-1-marks')}`);
    });

    await phase('the hover of a changed line shows the text the agent replaced', async () => {
      const line = wb.page.locator('.view-line', { hasText: 'Math.floor(sum / 2)' }).first();
      const hover = wb.page.locator('.monaco-hover', { hasText: 'Agent change' }).first();
      // As a person would: if the first move lands while the editor is still laying out, move again.
      // Monaco re-renders its view lines (the lenses and marks arrive in turns), so a line found a
      // moment ago may be gone from the DOM when its box is asked for: find it again each attempt.
      for (let attempt = 0; attempt < 5 && !(await hover.isVisible()); attempt++) {
        await line.waitFor({ state: 'visible', timeout: 10_000 });
        const box = await line.boundingBox();
        if (!box) continue;
        await wb.page.mouse.move(5, 450);
        await wb.page.mouse.move(box.x + 80 + attempt * 10, box.y + box.height / 2, { steps: 4 });
        await hover.waitFor({ timeout: 3_000 }).catch(() => undefined);
      }
      await hover.waitFor({ timeout: 1_000 });
      assert.match((await hover.textContent()) ?? '', /return sum \/ 2/);
      console.log(`      screenshot: ${await wb.screenshot('review-2-hover')}`);
      await wb.page.keyboard.press('Escape');
      await wb.page.mouse.move(5, 450);
    });

    await phase('Keep on the first hunk: its marks go, the count drops', async () => {
      await lenses(wb.page, /Keep/).first().click();
      await waitUntil('three changes left', async () => (await statusText(wb.page)).includes('3 changes to review'));
      await waitUntil('two hunk lenses left', async () => (await lenses(wb.page, /Keep/).count()) === 2);
      console.log(`      screenshot: ${await wb.screenshot('review-3-kept')}`);
    });

    await phase("Undo on the next hunk after a user edit: the hunk goes back, the person's edit stays", async () => {
      await wb.page.keyboard.press('Control+G');
      await wb.page.keyboard.type('2');
      await wb.page.keyboard.press('Enter');
      await wb.page.keyboard.press('End');
      await wb.page.keyboard.type('// Totals, discounts, tax.');
      await lenses(wb.page, /Undo/).first().click();
      await waitUntil('the discount hunk undone', async () => (await editorText(wb.page)).includes("if (code === 'HALF') return sum / 2;"));
      const text = await editorText(wb.page);
      assert.ok(text.includes('Totals, discounts, tax.'), 'the unsaved user edit stays');
      assert.ok(!text.includes('TENOFF'), 'the added line of the hunk is gone');
      await waitUntil('two changes left', async () => (await statusText(wb.page)).includes('2 changes to review'));
      await waitUntil('the undone hunk loses its lens: one left in this file', async () => (await lenses(wb.page, /Keep/).count()) === 1);
      console.log(`      screenshot: ${await wb.screenshot('review-4-undone')}`);
    });

    await phase('next change (Alt+F5) goes to the remaining hunk, then to the other file', async () => {
      // The keys go to the editor: give it the focus (the Undo link of the last phase may hold it).
      await wb.page.locator('.monaco-editor .view-lines').first().click();
      await wb.page.keyboard.press('Control+Home');
      const cursor = wb.page.locator('.statusbar-item', { hasText: /^Ln \d+, Col/ }).first();
      await waitUntil('the cursor at the top', async () => ((await cursor.textContent()) ?? '').startsWith('Ln 1,'));
      await wb.page.keyboard.press('Alt+F5');
      await waitUntil('the cursor on the tax hunk', async () => ((await cursor.textContent()) ?? '').startsWith('Ln 26,'));
      await wb.page.keyboard.press('Alt+F5');
      await waitUntil('greet.js to be active', async () =>
        ((await wb.page.locator('.tab.active').first().textContent()) ?? '').includes('greet.js'),
      );
      await lenses(wb.page, /Keep/).first().waitFor({ timeout: 15_000 });
      console.log(`      screenshot: ${await wb.screenshot('review-5-next-file')}`);
    });

    await phase('Keep All Agent Changes from the palette, the run picked: nothing waits any more', async () => {
      await paletteEntries(wb.page, 'Agent: Keep All Agent Changes', 'Keep All Agent Changes');
      await wb.page.keyboard.press('Enter');
      // It asks which run (the only one here) before keeping anything.
      const picker = wb.page.locator('.quick-input-widget', { hasText: 'of which run?' });
      await picker.waitFor({ timeout: 15_000 });
      await picker.locator('.monaco-list-row').first().waitFor({ timeout: 10_000 });
      await wb.page.keyboard.press('Enter');
      await waitUntil('the status bar item to go', async () => (await statusText(wb.page)) === '');
      await waitUntil('no lens left', async () => (await lenses(wb.page, /Keep/).count()) === 0);
      console.log(`      screenshot: ${await wb.screenshot('review-6-all-kept')}`);
    });
  });

  it('a command\'s chmod +x waits as one change: "made executable" above the script and in the Timeline, Undo clears the bit', async () => {
    const script = join(wb.workspace, 'deploy.sh');
    const isExec = () => (statSync(script).mode & 0o111) !== 0;
    const timeline = await openTimeline(wb.page);
    await phase('a run makes deploy.sh executable, its command allowed in the Timeline; one change waits', async () => {
      assert.equal(isExec(), false);
      await paletteEntries(wb.page, 'Agent: Run', 'Agent: Run');
      await wb.page.keyboard.press('Enter');
      const input = wb.page.locator('.quick-input-widget input');
      await input.waitFor();
      await input.fill(CHMOD_TASK);
      await wb.page.keyboard.press('Enter');
      // With a file open the run offers it as context: none is wanted.
      const context = wb.page.locator('.quick-input-widget', { hasText: 'No extra context' });
      await context.waitFor({ timeout: 5_000 }).then(
        () => wb.page.keyboard.press('Enter'),
        () => undefined,
      );
      const card = timeline.locator('.approvals .approval', { hasText: 'chmod' });
      await card.waitFor({ timeout: 30_000 });
      await card.locator('button', { hasText: 'Allow once' }).click();
      await waitUntil('the command to make the script executable', isExec, 30_000);
      const run = timeline.locator('[role="treeitem"].kind-run', { hasText: CHMOD_TASK }).first();
      await waitUntil('the run to complete', async () => ((await run.getAttribute('title')) ?? '').includes('Status: completed'));
      await waitUntil('the status bar count', async () => (await statusText(wb.page)).includes('1 change to review'), 30_000);
    });

    await phase('the status bar opens the script: "made executable" above it and on its Timeline row', async () => {
      // The status bar item goes to the next change: the script, at its top.
      await wb.page
        .locator('.statusbar-item', { hasText: /1 change to review/ })
        .first()
        .click();
      await wb.page.locator('.tab.active', { hasText: 'deploy.sh' }).waitFor({ timeout: 15_000 });
      await lenses(wb.page, /made executable/)
        .first()
        .waitFor({ timeout: 20_000 });
      const patch = timeline.locator('[role="treeitem"].kind-patch', { hasText: 'deploy.sh' }).first();
      // Its step, then its call, opened as a person would.
      for (const kind of ['step', 'call']) {
        const row = timeline.locator(`[role="treeitem"].kind-${kind}`, { hasText: 'chmod +x deploy.sh' }).first();
        await row.click();
        await row.press('ArrowRight');
      }
      await patch.waitFor({ timeout: 10_000 });
      assert.match((await patch.textContent()) ?? '', /made executable/);
      console.log(`      screenshot: ${await wb.screenshot('review-7-made-executable')}`);
    });

    await phase('Undo: the bit goes back on disk, the bytes stay, nothing waits', async () => {
      await lenses(wb.page, /Undo/).first().click();
      await waitUntil('the script no longer executable', () => !isExec(), 15_000);
      assert.equal(readFileSync(script, 'utf8'), '#!/bin/sh\necho deploying\n');
      await waitUntil('the status bar item to go', async () => (await statusText(wb.page)) === '');
      await waitUntil('no lens left', async () => (await lenses(wb.page, /Keep/).count()) === 0);
      // The same bytes, the bit put back: the row follows the bit.
      const patch = timeline.locator('[role="treeitem"].kind-patch', { hasText: 'deploy.sh' }).first();
      await waitUntil('the Timeline row to read not applied', async () => /not applied/.test((await patch.textContent()) ?? ''), 15_000);
      assert.match((await patch.textContent()) ?? '', /made executable/);
      console.log(`      screenshot: ${await wb.screenshot('review-8-mode-undone')}`);
    });
  });
});
