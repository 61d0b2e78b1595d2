// The Timeline end to end, in the real workbench (code-server + Chromium), against the loopback
// model server: start a run from the palette, watch its steps and ledger, type into a patched
// file (conflict), roll back one hunk (the user's edit stays), restore a checkpoint after its
// preview, undo the restore. Screenshots of each state go to test-results/screenshots/.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { openAgentWorkbench, phase, waitUntil } from '../support/e2e-story';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, paletteEntries, type Workbench } from '../support/workbench';

const NOTES_BEFORE = Array.from({ length: 40 }, (_, i) => `Line ${i + 1}: as the user wrote it`).join('\n') + '\n';
const NOTES_AFTER = NOTES_BEFORE.replace('Line 3: as the user wrote it', 'Line 3: rewritten by the agent').replace(
  'Line 38: as the user wrote it',
  'Line 38: rewritten by the agent',
);
const GREET_OLD = '  const head = names.slice(0, names.length - 2);';
const GREET_NEW = '  const head = names.slice(0, -1);';
const TASK = 'Tidy the notes and fix the greeting';

function toolUse(id: string, name: string, input: unknown) {
  return { type: 'tool_use' as const, id, name, input };
}

/** Answers by the number of assistant messages already in the request, so the script is stable. */
function scriptedModel(): Promise<FakeAnthropic> {
  const turns = [
    {
      content: [
        { type: 'text' as const, text: 'I will tidy the notes first.' },
        toolUse('toolu_notes', 'write_file', { path: 'notes.md', content: NOTES_AFTER }),
      ],
      stop_reason: 'tool_use',
    },
    {
      content: [toolUse('toolu_greet', 'edit_file', { path: 'src/greet.js', old_string: GREET_OLD, new_string: GREET_NEW })],
      stop_reason: 'tool_use',
    },
    { content: [{ type: 'text' as const, text: 'Done: the notes are tidied and the greeting is fixed.' }], stop_reason: 'end_turn' },
  ];
  return startFakeAnthropic((request) => {
    const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? [];
    const index = messages.filter((m) => m.role === 'assistant').length;
    return turns[Math.min(index, turns.length - 1)]!;
  });
}

function row(frame: FrameLocator, text: string | RegExp, kind?: 'run' | 'step' | 'call' | 'effect' | 'patch') {
  return frame.locator(kind ? `[role="treeitem"].kind-${kind}` : '[role="treeitem"]', { hasText: text }).first();
}

/** The editor's visible text (Monaco renders spaces as no-break spaces). */
async function editorText(page: Page): Promise<string> {
  return ((await page.locator('.editor-instance .view-lines').first().textContent()) ?? '').replace(/\u00a0/g, ' ');
}

async function clickRowAction(
  frame: FrameLocator,
  kind: 'run' | 'step' | 'patch',
  rowText: string | RegExp,
  actionTitle: string | RegExp,
): Promise<void> {
  const target = row(frame, rowText, kind);
  await target.click();
  await target.hover();
  const buttons = target.locator('button.action');
  await buttons.first().waitFor();
  const count = await buttons.count();
  for (let i = 0; i < count; i++) {
    const title = (await buttons.nth(i).getAttribute('title')) ?? '';
    if (typeof actionTitle === 'string' ? title.startsWith(actionTitle) : actionTitle.test(title)) {
      await buttons.nth(i).click();
      return;
    }
  }
  throw new Error(`no action "${String(actionTitle)}" on the row "${String(rowText)}"`);
}

/** Expands every collapsed row, top to bottom, with the keyboard (the tree is virtualised). */
async function expandAll(frame: FrameLocator): Promise<void> {
  for (let round = 0; round < 6; round++) {
    const collapsed = frame.locator('[role="treeitem"][aria-expanded="false"]');
    if ((await collapsed.count()) === 0) return;
    await collapsed.first().click();
    await collapsed
      .first()
      .press('ArrowRight')
      .catch(() => undefined);
    await new Promise((r) => setTimeout(r, 150));
  }
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

async function goToLineEnd(page: Page, line: number): Promise<void> {
  await page.keyboard.press('Control+G');
  await page.keyboard.type(String(line));
  await page.keyboard.press('Enter');
  await page.keyboard.press('End');
}

describe('e2e: the Timeline in the real workbench', function () {
  let fake: FakeAnthropic;
  let wb: Workbench;
  let frame: FrameLocator;

  before(async () => {
    fake = await scriptedModel();
    wb = await openAgentWorkbench(fake.url, { 'notes.md': NOTES_BEFORE });
  });

  after(async () => {
    await wb?.close();
    await fake?.close();
  });

  // One story in phases: each phase works on what the one before left (a run, a conflict, a
  // rolled-back hunk), so they are one test that stands alone, not tests that depend on their order.
  it('a run from the palette: its steps and ledger, a conflict, one hunk rolled back, a checkpoint restored and undone', async () => {
    await phase('starts a run from the palette; the Timeline shows its steps and ledger statuses', async () => {
      // The Timeline is open first: a run that starts reveals it, and a click on its icon then would close it.
      frame = await openTimeline(wb.page);
      const entries = await paletteEntries(wb.page, 'Agent: Run', 'Agent: Run');
      assert.ok(entries.some((e) => e.includes('Agent: Run')));
      await wb.page.keyboard.press('Enter');
      const input = wb.page.locator('.quick-input-widget input');
      await input.waitFor();
      await input.fill(TASK);
      await wb.page.keyboard.press('Enter');
      // The optional context pick appears only with an active editor; none is open yet.
      await row(frame, TASK).waitFor({ timeout: 30_000 });
      await waitUntil('the run to complete', async () =>
        ((await row(frame, TASK).getAttribute('title')) ?? '').includes('Status: completed'),
      );
      await expandAll(frame);
      await row(frame, 'write notes.md', 'call').waitFor();
      await row(frame, 'edit src/greet.js', 'call').waitFor();
      await row(frame, 'notes.md', 'patch').waitFor();
      const writeTitle = (await row(frame, 'write notes.md', 'call').getAttribute('title')) ?? '';
      assert.match(writeTitle, /succeeded/);
      assert.equal(readFileSync(join(wb.workspace, 'notes.md'), 'utf8'), NOTES_AFTER);
      console.log(`      screenshot: ${await wb.screenshot('timeline-1-run-completed')}`);
    });

    await phase('typing into a patched file turns its patch to conflict', async () => {
      await openFile(wb.page, 'notes.md');
      await goToLineEnd(wb.page, 20);
      await wb.page.keyboard.type(' (user edit)');
      await waitUntil(
        'the notes.md patch to show conflict',
        async () => ((await row(frame, 'notes.md', 'patch').textContent()) ?? '').includes('conflict'),
        10_000,
      );
      console.log(`      screenshot: ${await wb.screenshot('timeline-2-patch-conflict')}`);
    });

    await phase("rolls back one hunk of the file; the user's unsaved edit and the other hunk stay", async () => {
      // The review CodeLens: Keep / Undo above each agent hunk; the first Undo is the top hunk (line 3).
      const lens = wb.page.locator('.codelens-decoration a', { hasText: /Undo/ }).first();
      await lens.waitFor({ timeout: 20_000 });
      console.log(`      screenshot: ${await wb.screenshot('timeline-3-hunk-codelens')}`);
      await lens.click();
      await waitUntil('line 3 to be back', async () => (await editorText(wb.page)).includes('Line 3: as the user wrote it'));
      assert.ok(
        (await editorText(wb.page)).includes('Line 20: as the user wrote it (user edit)'),
        'the unsaved user edit is still in the buffer',
      );
      await wb.page.keyboard.press('Control+S');
      await waitUntil('the save', () => readFileSync(join(wb.workspace, 'notes.md'), 'utf8').includes('Line 3: as the user wrote it'));
      const saved = readFileSync(join(wb.workspace, 'notes.md'), 'utf8');
      assert.ok(saved.includes('Line 20: as the user wrote it (user edit)'), "the user's edit is still there");
      assert.ok(saved.includes('Line 38: rewritten by the agent'), 'the other hunk stays');
      console.log(`      screenshot: ${await wb.screenshot('timeline-4-hunk-rolled-back')}`);
    });

    await phase('restores a checkpoint after its preview (conflicts listed first), then undoes it', async () => {
      const greetPath = join(wb.workspace, 'src/greet.js');
      assert.ok(readFileSync(greetPath, 'utf8').includes(GREET_NEW));
      await clickRowAction(frame, 'step', 'Step 1', 'Restore to the start of step 1');
      const dialog = frame.locator('[role="dialog"]');
      await dialog.waitFor();
      const confirm = dialog.locator('button.primary');
      await waitUntil(
        'the preview',
        async () => (await confirm.isEnabled()) && ((await confirm.textContent()) ?? '').startsWith('Restore'),
      );
      const lines = await dialog.locator('.preview-list li').allTextContents();
      console.log(`      preview: ${lines.join(' | ')}`);
      assert.ok(
        lines.some((l) => l.includes('greet.js')),
        'the preview names greet.js',
      );
      // notes.md has the user's edit and an already rolled-back hunk: a conflict, listed first and left alone.
      assert.match(lines[0] ?? '', /notes\.md.*conflict/);
      console.log(`      screenshot: ${await wb.screenshot('timeline-5-restore-preview')}`);
      await confirm.click();
      await dialog.waitFor({ state: 'detached' });
      await waitUntil('greet.js to be restored', () => readFileSync(greetPath, 'utf8').includes(GREET_OLD));
      const notes = readFileSync(join(wb.workspace, 'notes.md'), 'utf8');
      assert.ok(notes.includes('(user edit)'), "the restore left the user's edit alone");
      await waitUntil(
        'the greet.js patch to show rolled back',
        async () => ((await row(frame, 'src/greet.js', 'patch').textContent()) ?? '').includes('rolled back'),
        10_000,
      );
      console.log(`      screenshot: ${await wb.screenshot('timeline-6-restored')}`);

      await clickRowAction(frame, 'run', TASK, 'Undo last restore');
      await waitUntil('greet.js to be back to the agent version', () => readFileSync(greetPath, 'utf8').includes(GREET_NEW));
      await waitUntil(
        'the greet.js patch to show applied again',
        async () => ((await row(frame, 'src/greet.js', 'patch').textContent()) ?? '').includes('applied'),
        10_000,
      );
      assert.equal(readFileSync(join(wb.workspace, 'notes.md'), 'utf8'), notes, 'undo touched only what the restore changed');
      console.log(`      screenshot: ${await wb.screenshot('timeline-7-restore-undone')}`);
    });
  });
});
