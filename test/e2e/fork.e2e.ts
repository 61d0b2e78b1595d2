// Rewind that forks, in the real workbench (code-server + Chromium) against the strict loopback
// model server: a completed run is forked at step 2 from the Timeline, the fork is given a new
// instruction, both branches show in the Timeline's tree of runs, the fork's Compare action opens
// their steps side by side and their files as a diff, and the parent, untouched, goes on. The
// fork is the window's selected run as soon as it is made, and stays so across a reload.
// Screenshots: test-results/screenshots/fork-*.png.
import { strict as assert } from 'node:assert';
import type { FrameLocator } from 'playwright-core';
import { openAgentWorkbench, phase, waitUntil } from '../support/e2e-story';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, type Workbench } from '../support/workbench';

const TASK = 'Tidy notes.txt';
const FORK_INSTRUCTION = 'Write the fork version instead';
const PARENT_INSTRUCTION = 'Say what you did';

function toolUse(id: string, name: string, input: unknown) {
  return { type: 'tool_use' as const, id, name, input };
}
const text = (words: string) => ({ content: [{ type: 'text' as const, text: words }], stop_reason: 'end_turn' });

/** Answers from what the request holds: the parent's three steps, the fork's instruction, the parent's later one. */
function scriptedModel(): Promise<FakeAnthropic> {
  return startFakeAnthropic((request) => {
    const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? [];
    const said = JSON.stringify(messages);
    const turn = messages.filter((m) => m.role === 'assistant').length;
    if (said.includes(FORK_INSTRUCTION)) {
      if (!said.includes('toolu_fork_write')) {
        return {
          content: [toolUse('toolu_fork_write', 'write_file', { path: 'notes.txt', content: 'fork version\n' })],
          stop_reason: 'tool_use',
        };
      }
      return text('Fork: wrote the fork version.');
    }
    if (said.includes(PARENT_INSTRUCTION)) return text('Parent: I wrote the parent version, and nothing since.');
    if (turn === 0) return { content: [toolUse('toolu_read', 'read_file', { path: 'notes.txt' })], stop_reason: 'tool_use' };
    if (turn === 1) {
      const edit = toolUse('toolu_edit', 'edit_file', { path: 'notes.txt', old_string: 'draft', new_string: 'parent version' });
      return { content: [edit], stop_reason: 'tool_use' };
    }
    return text('Parent: wrote the parent version.');
  });
}

function runRow(frame: FrameLocator, fork: boolean) {
  const rows = frame.locator('[role="treeitem"].kind-run', { hasText: TASK });
  return (fork ? rows.filter({ hasText: '↳ fork at step 2' }) : rows.filter({ hasNotText: '↳ fork' })).first();
}

function row(frame: FrameLocator, words: string | RegExp, kind: 'step' | 'call') {
  return frame.locator(`[role="treeitem"].kind-${kind}`, { hasText: words }).first();
}

async function status(frame: FrameLocator, fork: boolean): Promise<string> {
  return (await runRow(frame, fork).getAttribute('title')) ?? '';
}

describe('e2e: rewind that forks', function () {
  let fake: FakeAnthropic;
  let wb: Workbench;
  let frame: FrameLocator;

  before(async function () {
    this.timeout(600_000);
    fake = await scriptedModel();
    wb = await openAgentWorkbench(fake.url, { 'notes.txt': 'draft\n' });
  });

  after(async () => {
    await wb?.close();
    await fake?.close();
  });

  it('fork a completed run at step 2, a new instruction in the fork, both branches, compare them, the parent goes on', async function () {
    this.timeout(600_000);
    await phase('a run completes in three steps', async () => {
      frame = await openTimeline(wb.page);
      const input = frame.locator('textarea.composer-input');
      await input.click();
      await input.fill(TASK);
      await input.press('Enter');
      await runRow(frame, false).waitFor({ timeout: 30_000 });
      await waitUntil('the run to complete', async () => (await status(frame, false)).includes('Status: completed'), 60_000);
      await runRow(frame, false).click();
      await row(frame, 'Parent: wrote the parent version', 'step').waitFor({ timeout: 15_000 });
      console.log(`      screenshot: ${await wb.screenshot('fork-1-parent-completed')}`);
    });

    await phase('a call row says which point "before this call" is', async () => {
      const step = row(frame, /edit notes\.txt/, 'step');
      await step.click();
      await wb.page.keyboard.press('ArrowRight');
      const call = row(frame, /edit notes\.txt/, 'call');
      await call.hover();
      await call.locator('button[data-action="restore"]').click();
      const heading = frame.locator('.dialog .dialog-title');
      await heading.waitFor({ timeout: 10_000 });
      assert.equal(await heading.textContent(), "Restore to after step 2's model reply, before edit_file");
      await frame.locator('.dialog button', { hasText: 'Cancel' }).click();
    });

    await phase('fork at step 2 from its row: the fork shows beside its parent', async () => {
      const step = row(frame, /edit notes\.txt/, 'step');
      await step.click();
      await step.hover();
      await step.locator('button[data-action="fork"]').click();
      await runRow(frame, true).waitFor({ timeout: 30_000 });
      assert.match(await status(frame, true), /Fork of run .* from the start of step 2/);
      assert.match(await status(frame, false), /Status: completed/, 'the parent stays as it was');
      console.log(`      screenshot: ${await wb.screenshot('fork-2-forked')}`);
    });

    await phase(
      'the fork is the selected run at once: the tree, the conversation and the composer follow it, and after a reload still do',
      async () => {
        const followsFork = async () =>
          (await runRow(frame, true).getAttribute('class'))?.includes('selected') === true &&
          (await frame.locator('.composer-target', { hasText: 'paused' }).count()) === 1 &&
          (await frame.locator('.detail', { hasText: 'Parent: wrote the parent version' }).count()) === 0;
        await waitUntil('the tree, the conversation and the composer to show the fork', followsFork, 15_000);
        await wb.page.reload();
        await wb.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
        frame = await openTimeline(wb.page);
        await runRow(frame, true).waitFor({ timeout: 45_000 });
        await waitUntil('the same run to be followed by all three after the reload', followsFork, 30_000);
        console.log(`      screenshot: ${await wb.screenshot('fork-2b-fork-selected-after-reload')}`);
      },
    );

    await phase('the fork takes a new instruction and completes its own way', async () => {
      await runRow(frame, true).click();
      const input = frame.locator('textarea.composer-input');
      await frame.locator('.composer-target', { hasText: 'paused' }).waitFor({ timeout: 10_000 });
      await input.fill(FORK_INSTRUCTION);
      await input.press('Enter');
      await waitUntil('the fork to complete', async () => (await status(frame, true)).includes('Status: completed'), 60_000);
      // After the reload the fork may come back collapsed (its expansion is saved a moment after it is
      // drawn): a person opens it, with the keyboard here.
      const forkRow = runRow(frame, true);
      await forkRow.click();
      if ((await forkRow.getAttribute('aria-expanded')) === 'false') await wb.page.keyboard.press('ArrowRight');
      await row(frame, 'Fork: wrote the fork version', 'step').waitFor({ timeout: 15_000 });
      assert.match(await status(frame, false), /Status: completed/, 'the parent is still completed');
      console.log(`      screenshot: ${await wb.screenshot('fork-3-both-branches')}`);
    });

    await phase("the fork's Compare action: the steps side by side, the file each wrote as a diff", async () => {
      const fork = runRow(frame, true);
      await fork.hover();
      await fork.locator('button[data-action="compare"]').click();
      // Opened: both tabs, titled by the runs' names, the Files diff drawn (what the first screenshot shows).
      await wb.page
        .locator('.tabs-container .tab', { hasText: `Steps: ${TASK} ↔ fork: ${FORK_INSTRUCTION}` })
        .first()
        .waitFor({ timeout: 30_000 });
      const filesTab = wb.page.locator('.tabs-container .tab', { hasText: `Files: ${TASK} ↔ fork: ${FORK_INSTRUCTION}` });
      await filesTab.first().waitFor({ timeout: 30_000 });
      await wb.page.locator('.monaco-editor', { hasText: 'fork version' }).first().waitFor({ timeout: 30_000 });
      console.log(`      screenshot: ${await wb.screenshot('fork-4-compare-opened')}`);
      console.log(`      screenshot: ${await wb.screenshot('fork-5-compare-files')}`);
      await wb.page
        .locator('.tabs-container .tab', { hasText: `Steps: ${TASK} ↔ fork: ${FORK_INSTRUCTION}` })
        .first()
        .click();
      const steps = wb.page.locator('.monaco-diff-editor', { hasText: 'Fork: wrote the fork version' });
      await steps.first().waitFor({ timeout: 30_000 });
      await wb.page.locator('.monaco-diff-editor', { hasText: 'Parent: wrote the parent version' }).first().waitFor({ timeout: 10_000 });
      console.log(`      screenshot: ${await wb.screenshot('fork-6-compare-steps')}`);
    });

    await phase('the parent, untouched by the fork, goes on with an instruction of its own', async () => {
      frame = await openTimeline(wb.page);
      const parent = runRow(frame, false);
      await parent.click();
      // The view opens only a run new to it: the parent may be shown closed (a person opens it to see its steps).
      if ((await parent.getAttribute('aria-expanded')) === 'false') await parent.press('ArrowRight');
      await waitUntil('the parent to be open', async () => (await parent.getAttribute('aria-expanded')) === 'true', 10_000);
      await frame.locator('.composer-target', { hasText: 'completed' }).waitFor({ timeout: 10_000 });
      const input = frame.locator('textarea.composer-input');
      await input.fill(PARENT_INSTRUCTION);
      await input.press('Enter');
      await row(frame, 'Parent: I wrote the parent version, and nothing since', 'step').waitFor({ timeout: 60_000 });
      await waitUntil('the parent to complete', async () => (await status(frame, false)).includes('Status: completed'), 60_000);
      console.log(`      screenshot: ${await wb.screenshot('fork-7-parent-goes-on')}`);
    });
  });
});
