// Branches a person can follow, in the real workbench (code-server + Chromium) against the strict
// loopback model server, in one workbench session:
//   (f) with no key, the view says "Set your Anthropic API key to start" with the button, which sets one;
//   (b) "Restore to before this call" (Both), then an instruction: the fork takes it;
//   (a) a restore of Both at a step, then an instruction: the fork is named by it, under its parent;
//   (c) Fork from here, then Compare: the tabs name both branches by title, parent left;
//   (e) a reload with the runs and an editor tab open: both follow the selected run;
//   (d) an external effect undone by the agent, then the preview again: the effect reads "already
//       undone", the undo call "an undo of", and neither is offered (the commands' network is on, so
//       a command is an effect no patch holds).
// Screenshots: test-results/screenshots/first-hour-branches-*-{300,800}-{light,dark}.png.
import { strict as assert } from 'node:assert';
import type { FrameLocator } from 'playwright-core';
import { phase, waitUntil } from '../support/e2e-story';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, openWorkbench, paletteEntries, type Workbench } from '../support/workbench';
import { shots } from './first-hour-shots';

const TASK = 'Fix the greeting bug';
const AFTER_CALL = 'Leave the file as it is and say so';
const OXFORD = 'Use the Oxford comma';
const PUBLISH = 'Publish the release notes';

function toolUse(id: string, name: string, input: unknown) {
  return { content: [{ type: 'tool_use' as const, id, name, input }], stop_reason: 'tool_use' };
}
const text = (words: string) => ({ content: [{ type: 'text' as const, text: words }], stop_reason: 'end_turn' });

/** Answers from what the request holds: the run's three steps, and each fork's instruction. */
function scriptedModel(): Promise<FakeAnthropic> {
  return startFakeAnthropic((request) => {
    const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? [];
    const said = JSON.stringify(messages);
    if (said.includes(PUBLISH)) {
      if (said.includes('Undo the external effects'))
        return said.includes('toolu_unpublish')
          ? text('Removed the published notes.')
          : toolUse('toolu_unpublish', 'run_command', { command: 'rm -f published.txt' });
      return said.includes('toolu_publish')
        ? text('Published.')
        : toolUse('toolu_publish', 'run_command', { command: 'echo notes > published.txt' });
    }
    if (said.includes(AFTER_CALL)) return text('Left greeting.txt as it was.');
    if (said.includes(OXFORD)) {
      if (!said.includes('toolu_oxford'))
        return toolUse('toolu_oxford', 'write_file', { path: 'greeting.txt', content: 'Hello, Ann, Bo, and Cy\n' });
      return text('Used the Oxford comma.');
    }
    const turn = messages.filter((m) => m.role === 'assistant').length;
    if (turn === 0) return toolUse('toolu_read', 'read_file', { path: 'greeting.txt' });
    if (turn === 1)
      return toolUse('toolu_edit', 'edit_file', { path: 'greeting.txt', old_string: 'undefined', new_string: 'Ann, Bo and Cy' });
    return text('Fixed. All 4 tests pass.');
  });
}

function runRow(frame: FrameLocator, label: string | RegExp) {
  return frame.locator('[role="treeitem"].kind-run', { has: frame.locator('.label', { hasText: label }) }).first();
}

function row(frame: FrameLocator, words: string | RegExp, kind: 'step' | 'call') {
  return frame.locator(`[role="treeitem"].kind-${kind}`, { hasText: words }).first();
}

async function tooltip(frame: FrameLocator, label: string | RegExp): Promise<string> {
  return (await runRow(frame, label).getAttribute('title')) ?? '';
}

/** Opens the restore dialog from `target`'s restore action, picks Both, restores. */
async function restoreBoth(frame: FrameLocator, target: ReturnType<typeof row>, title: RegExp): Promise<void> {
  await target.hover();
  await target.locator('button[data-action="restore"]').click();
  const heading = frame.locator('.dialog .dialog-title');
  await heading.waitFor({ timeout: 10_000 });
  assert.match((await heading.textContent()) ?? '', title);
  await frame.locator('.dialog .modes .mode', { hasText: 'Both' }).click();
  const confirm = frame.locator('.dialog button.primary', { hasText: 'Restore files and session' });
  await waitUntil('the preview of Both', async () => (await confirm.count()) === 1 && (await confirm.isEnabled()), 15_000);
  await confirm.click();
  await frame.locator('.dialog').waitFor({ state: 'detached', timeout: 15_000 });
}

/** Allows the command waiting for approval in the Timeline (its card names `words`). */
async function allowOnce(frame: FrameLocator, words: string): Promise<void> {
  const card = frame.locator('.approvals .approval', { hasText: words });
  await card.waitFor({ timeout: 30_000 });
  await card.locator('button', { hasText: 'Allow once' }).click();
}

/** Opens the restore dialog at the start of the run's first step. */
async function openPreview(frame: FrameLocator): Promise<void> {
  const step = row(frame, /echo notes/, 'step');
  await step.click();
  await step.hover();
  await step.locator('button[data-action="restore"]').click();
  await frame.locator('.dialog .preview-line.effect').first().waitFor({ timeout: 15_000 });
}

/** Types an instruction into the composer for the selected run `title`, and sends it. */
async function instruct(frame: FrameLocator, title: string, words: string): Promise<void> {
  await frame.locator('.composer-target', { hasText: `Continues "${title}"` }).waitFor({ timeout: 15_000 });
  const input = frame.locator('textarea.composer-input');
  await input.fill(words);
  await input.press('Enter');
}

describe('e2e: branches a person can follow', function () {
  let fake: FakeAnthropic;
  let wb: Workbench;
  let frame: FrameLocator;

  before(async function () {
    this.timeout(600_000);
    fake = await scriptedModel();
    // No key anywhere: the view must ask for one.
    wb = await openWorkbench({
      files: { 'greeting.txt': 'Hello, undefined\n' },
      settings: {
        'agentCheckpoints.provider': 'anthropic',
        'agentCheckpoints.baseUrl': fake.url,
        'agentCheckpoints.model': 'claude-e2e-test',
        // (d)'s command must be an effect no patch holds: with the network on it may have reached
        // anything, so it stays external (a sandboxed command without network would be contained).
        'agentCheckpoints.commandNetwork': 'on',
      },
    });
  });

  after(async () => {
    await wb?.close();
    await fake?.close();
  });

  it('no key, restores and forks named by what made them, Compare by title, a reload that follows the selected run', async function () {
    this.timeout(900_000);
    await phase('(f) no key: the view says so, with the button, and the banner goes once a key is set', async () => {
      assert.equal(process.env['ANTHROPIC_API_KEY'], undefined, 'this story needs no key in the environment');
      frame = await openTimeline(wb.page);
      const banner = frame.locator('.key-banner', { hasText: 'Set your Anthropic API key to start' });
      await banner.waitFor({ timeout: 30_000 });
      assert.equal(await banner.getAttribute('aria-label'), 'API key needed');
      await shots(wb, 'branches-f-no-key');
      await banner.locator('button', { hasText: 'Set API Key' }).click();
      const input = wb.page.locator('.quick-input-widget input');
      await input.waitFor({ timeout: 15_000 });
      await input.fill('sk-ant-e2e-not-a-real-key');
      await input.press('Enter');
      await banner.waitFor({ state: 'hidden', timeout: 15_000 });
    });

    await phase('a run completes in three steps', async () => {
      const input = frame.locator('textarea.composer-input');
      await input.fill(TASK);
      await input.press('Enter');
      await runRow(frame, TASK).waitFor({ timeout: 30_000 });
      await waitUntil('the run to complete', async () => (await tooltip(frame, TASK)).includes('Status: completed'), 60_000);
      await runRow(frame, TASK).click();
      await row(frame, 'Fixed. All 4 tests pass', 'step').waitFor({ timeout: 15_000 });
    });

    await phase('(b) "Restore to before this call", Both, then an instruction: the fork takes it', async () => {
      const step = row(frame, /edit greeting\.txt/, 'step');
      await step.click();
      await wb.page.keyboard.press('ArrowRight');
      await restoreBoth(frame, row(frame, /edit greeting\.txt/, 'call'), /before edit_file/);
      const fresh = `Fork at step 2 of ${TASK}`;
      await runRow(frame, fresh).waitFor({ timeout: 30_000 });
      await instruct(frame, fresh, AFTER_CALL);
      await runRow(frame, AFTER_CALL).waitFor({ timeout: 30_000 });
      await waitUntil('the fork to complete', async () => (await tooltip(frame, AFTER_CALL)).includes('Status: completed'), 60_000);
      await runRow(frame, AFTER_CALL).click();
      await row(frame, 'Left greeting.txt as it was', 'step').waitFor({ timeout: 15_000 });
      await shots(wb, 'branches-b-before-call-instructed');
    });

    await phase('(a) Both at the start of step 2, then an instruction: the fork is named by it, under its parent', async () => {
      await runRow(frame, TASK).click();
      const step = row(frame, /edit greeting\.txt/, 'step');
      await step.waitFor({ timeout: 15_000 });
      await restoreBoth(frame, step, /step 2/);
      const fresh = frame.locator('[role="treeitem"].kind-run.selected', { hasText: `Fork at step 2 of ${TASK}` });
      await fresh.waitFor({ timeout: 30_000 });
      await instruct(frame, `Fork at step 2 of ${TASK}`, OXFORD);
      await waitUntil('the fork to complete', async () => (await tooltip(frame, OXFORD)).includes('Status: completed'), 60_000);
      const named = runRow(frame, OXFORD);
      assert.equal(await named.locator('.desc').textContent(), `↳ fork at step 2 of ${TASK}`);
      const labels = await frame.locator('[role="treeitem"].kind-run .label').allTextContents();
      assert.equal(labels.indexOf(TASK), labels.length - 3, `the forks come right after their parent: ${labels.join(' | ')}`);
      await shots(wb, 'branches-a-restored-and-instructed');
    });

    await phase('(c) Fork from here, then Compare: both branches by title, the parent on the left', async () => {
      await runRow(frame, TASK).click();
      const step = row(frame, 'Fixed. All 4 tests pass', 'step');
      await step.click();
      await step.hover();
      await step.locator('button[data-action="fork"]').click();
      const forked = frame.locator('[role="treeitem"].kind-run.selected', { hasText: `Fork at step 3 of ${TASK}` });
      await forked.waitFor({ timeout: 30_000 });
      const oxford = runRow(frame, OXFORD);
      await waitUntil('the Oxford comma fork to be selected', async () => {
        await oxford.click();
        return (await oxford.getAttribute('class'))?.includes('selected') === true;
      });
      await oxford.locator('button[data-action="compare"]').click();
      const names = `${TASK} ↔ fork: ${OXFORD}`;
      await wb.page
        .locator('.tabs-container .tab', { hasText: `Files: ${names}` })
        .first()
        .waitFor({ timeout: 30_000 });
      await wb.page
        .locator('.tabs-container .tab', { hasText: `Steps: ${names}` })
        .first()
        .waitFor({ timeout: 30_000 });
      await shots(wb, 'branches-c-compare');
    });

    await phase('(e) a reload with the runs and an editor tab open: the side bar and the tab follow the selected run', async () => {
      await runRow(frame, AFTER_CALL).click();
      // The palette's key goes to the workbench, not the webview that has the focus: focus an editor tab first.
      await wb.page.locator('.tabs-container .tab', { hasText: 'Steps:' }).first().click();
      await paletteEntries(wb.page, 'Agent: Open Timeline in Editor', 'Open Timeline in Editor');
      await wb.page.keyboard.press('Enter');
      await wb.page.locator('.tabs-container .tab', { hasText: 'Agent Timeline' }).waitFor({ timeout: 30_000 });
      // As a person reloads (the workbench saves its editors first, which a page reload does not wait for).
      await wb.page.locator('.tabs-container .tab', { hasText: 'Steps:' }).first().click();
      await paletteEntries(wb.page, 'Developer: Reload Window', 'Reload Window');
      const reloaded = wb.page.waitForEvent('load', { timeout: 60_000 });
      await wb.page.keyboard.press('Enter');
      await reloaded;
      await wb.page.locator('.tabs-container .tab', { hasText: 'Agent Timeline' }).click({ timeout: 60_000 });
      frame = await openTimeline(wb.page);
      const following = async (): Promise<number> => {
        let n = 0;
        for (const f of wb.page.frames()) {
          const follows = await f
            .evaluate(
              (title) =>
                [...document.querySelectorAll('.row.kind-run.selected .label')].some((l) => l.textContent === title) &&
                (document.querySelector('.composer-target')?.textContent ?? '').includes(`Continues "${title}"`),
              AFTER_CALL,
            )
            .catch(() => false);
          if (follows) n++;
        }
        return n;
      };
      await waitUntil('the side bar and the editor tab to follow the selected run', async () => (await following()) >= 2, 120_000);
      await shots(wb, 'branches-e-after-reload');
    });

    await phase('(d) an effect undone by the agent, then the preview again: shown as undone, not offered again', async () => {
      await frame.locator('.composer-target .link-button, button.link-button', { hasText: 'start a new run' }).first().click();
      const input = frame.locator('textarea.composer-input');
      await input.fill(PUBLISH);
      await input.press('Enter');
      await allowOnce(frame, 'echo notes');
      await waitUntil('the run to complete', async () => (await tooltip(frame, PUBLISH)).includes('Status: completed'), 60_000);
      await runRow(frame, PUBLISH).click();
      await openPreview(frame);
      const pick = frame.locator('.dialog input.effect-pick');
      assert.equal(await pick.count(), 1, 'the effect is offered, checked');
      assert.equal(await pick.isChecked(), true);
      assert.match(
        (await frame.locator('.dialog .preview-line.effect .path').first().textContent()) ?? '',
        /run `echo notes > published\.txt`/,
      );
      await frame.locator('.dialog button.secondary', { hasText: 'Ask the agent to undo these' }).click();
      await allowOnce(frame, 'rm -f published.txt');
      await waitUntil('the undo to complete', async () => (await tooltip(frame, PUBLISH)).includes('Status: completed'), 60_000);
      await row(frame, 'Removed the published notes', 'step').waitFor({ timeout: 15_000 });
      await openPreview(frame);
      const lines = frame.locator('.dialog .preview-line.effect');
      await waitUntil('both calls in the preview', async () => (await lines.count()) === 2, 15_000);
      const words = (await lines.allTextContents()).join('\n');
      assert.match(words, /already undone by run_command \(toolu_unpublish\)/);
      assert.match(words, /an undo of run_command \(toolu_publish\)/);
      assert.equal(await frame.locator('.dialog input.effect-pick').count(), 0, 'nothing is offered again');
      assert.equal(await frame.locator('.dialog button.secondary', { hasText: 'Ask the agent to undo these' }).isVisible(), false);
      await shots(wb, 'branches-d-undone-preview');
    });
  });
});
