// The conversation in the Timeline, in the real workbench (code-server + Chromium) against the
// loopback model server: a run started from the composer, the model's text streaming into its
// step, an inline approval, a follow-up instruction on the completed run, and a window reload
// mid-run followed by a resume; the model's plan (update_plan) pinned above the run's
// conversation (nothing drawn over it, at 300 and 800 px), kept across the reload. Screenshots go
// to test-results/screenshots/conversation-*.png (the plan: conversation-plan-{300,800}-{light,dark}.png).
import { strict as assert } from 'node:assert';
import type { FrameLocator, Locator } from 'playwright-core';
import { openAgentWorkbench, phase, waitUntil } from '../support/e2e-story';
import { setSideBarWidth, shots } from './first-hour-shots';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, type Workbench } from '../support/workbench';

const TASK = 'Check that the greeting tests pass';
const PLAN = 'I will run the tests first, then tell you what I found. The command is `node test.js` in the workspace folder.';
const FOLLOW_UP = 'Now say which case fails';
const STEPS = [
  { step: 'Run the greeting tests with node test.js', status: 'in_progress' },
  { step: 'Read the case that fails', status: 'pending' },
  { step: 'Say what fails and why', status: 'pending' },
];
const SLOW_ANSWER = 'The case with three names fails: the last two names are joined without a comma.';

function toolUse(id: string, name: string, input: unknown) {
  return { type: 'tool_use' as const, id, name, input };
}

/** How many times the model was asked for the follow-up's answer. */
let followUpAsked = 0;

/** Answers by the number of assistant messages already in the request, so the script is stable. */
function scriptedModel(): Promise<FakeAnthropic> {
  const turns = [
    {
      content: [
        { type: 'text' as const, text: PLAN },
        toolUse('toolu_plan', 'update_plan', { steps: STEPS }),
        toolUse('toolu_test', 'run_command', { command: 'node test.js' }),
      ],
      stop_reason: 'tool_use',
      eventDelayMs: 600,
    },
    { content: [{ type: 'text' as const, text: 'The tests ran: **one case fails**.\n\n```\nnode test.js\n```' }], stop_reason: 'end_turn' },
    { content: [{ type: 'text' as const, text: SLOW_ANSWER }], stop_reason: 'end_turn' },
  ];
  // The follow-up's first answer streams its first words, then holds for longer than the story
  // takes: the window is reloaded while it is being written, so the run always needs its resume.
  const cut = { ...turns[2]!, eventDelayMs: 500, holdAfterEvents: { events: 4, ms: 180_000 } };
  followUpAsked = 0;
  return startFakeAnthropic((request) => {
    const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? [];
    const index = messages.filter((m) => m.role === 'assistant').length;
    if (index === 2 && followUpAsked++ === 0) return cut;
    return turns[Math.min(index, turns.length - 1)]!;
  });
}

function row(frame: FrameLocator, text: string | RegExp, kind?: 'run' | 'step' | 'call') {
  return frame.locator(kind ? `[role="treeitem"].kind-${kind}` : '[role="treeitem"]', { hasText: text }).first();
}

async function runTitle(frame: FrameLocator): Promise<string> {
  return (await row(frame, TASK, 'run').getAttribute('title')) ?? '';
}

/** The plan is pinned above the run's conversation, says how far it is, and opens and closes from the keyboard. */
async function pinnedPlan(frame: FrameLocator): Promise<void> {
  const plan = frame.locator('.conversation > details.plan');
  await plan.waitFor({ timeout: 10_000 });
  assert.equal(
    await frame.locator('.conversation > :first-child').evaluate((node) => node.classList.contains('plan')),
    true,
    'pinned first',
  );
  assert.equal((await plan.locator('.plan-progress').textContent())?.trim(), `0 of 3 done; now: ${STEPS[0]!.step}`);
  assert.deepEqual(
    await plan.locator('.plan-text').allTextContents(),
    STEPS.map((s) => s.step),
  );
  assert.equal(await plan.locator('.plan-in_progress .visually-hidden').textContent(), ' (in progress)');
  await frame.locator('.detail').focus();
  await frame.locator('.detail').press('Shift+Tab');
  const summary = plan.locator('summary');
  assert.equal(
    await summary.evaluate((node) => node === document.activeElement),
    true,
    'Shift+Tab from the conversation reaches the plan above it',
  );
  await summary.press('Enter');
  assert.equal(await plan.evaluate((node) => (node as HTMLDetailsElement).open), false, 'Enter closes it');
  await summary.press('Enter');
  assert.equal(await plan.evaluate((node) => (node as HTMLDetailsElement).open), true, 'and opens it again');
}

/**
 * The view reads cleanly (`where`: the width and theme): the filter bar, the tree, the plan, the
 * conversation, the other runs' waiting calls and the composer do not overlap; in the
 * conversation, no part in view (a step, a restore point, the waiting call's card) lies under the
 * plan, and what shows at its middle is itself, not something drawn over it.
 */
async function readsCleanly(frame: FrameLocator, where: string): Promise<void> {
  const problems = await frame.locator('#app').evaluate((app) => {
    const found: string[] = [];
    // No named functions in here: the test's compiler would wrap them in a helper the page lacks.
    const round = Math.round;
    const parts = ['.filter-bar', '.tree', 'details.plan', '.detail', '.approvals:not(.inline)', '.composer']
      .map((selector) => ({ selector, node: app.querySelector<HTMLElement>(selector) }))
      .filter((part) => part.node && part.node.getClientRects().length > 0);
    for (const [i, a] of parts.entries())
      for (const b of parts.slice(i + 1)) {
        if (a.node!.contains(b.node) || b.node!.contains(a.node)) continue;
        const [ra, rb] = [a.node!.getBoundingClientRect(), b.node!.getBoundingClientRect()];
        if (ra.top < rb.bottom - 0.5 && rb.top < ra.bottom - 0.5 && ra.left < rb.right - 0.5 && rb.left < ra.right - 0.5)
          found.push(`${a.selector} ${round(ra.top)}..${round(ra.bottom)} overlaps ${b.selector} ${round(rb.top)}..${round(rb.bottom)}`);
      }
    const plan = app.querySelector('details.plan')!.getBoundingClientRect();
    const detail = app.querySelector<HTMLElement>('.detail')!;
    const frameBox = detail.getBoundingClientRect();
    const seen = { top: frameBox.top + detail.clientTop, left: frameBox.left + detail.clientLeft };
    const view = { ...seen, bottom: seen.top + detail.clientHeight, right: seen.left + detail.clientWidth };
    for (const block of detail.querySelectorAll<HTMLElement>(':scope > :not(details.plan), .approval')) {
      const r = block.getBoundingClientRect();
      const shown = {
        top: Math.max(r.top, view.top),
        bottom: Math.min(r.bottom, view.bottom),
        left: Math.max(r.left, view.left),
        right: Math.min(r.right, view.right),
      };
      if (shown.bottom - shown.top < 1 || shown.right - shown.left < 1) continue;
      const name = `${block.className || block.tagName} ${round(shown.top)}..${round(shown.bottom)}`;
      if (shown.top < plan.bottom - 0.5 && plan.top < shown.bottom - 0.5)
        found.push(`${name} lies under the plan ${round(plan.top)}..${round(plan.bottom)}`);
      const hit = document.elementFromPoint((shown.left + shown.right) / 2, (shown.top + shown.bottom) / 2);
      if (!hit || !block.contains(hit)) found.push(`${name} is covered at its middle by ${hit?.className || hit?.tagName}`);
    }
    return found;
  });
  assert.deepEqual(problems, [], `the conversation reads cleanly at ${where}`);
}

/** The waiting call's card and the plan can be reached: scrolled to, each is in view and answers at its middle. */
async function reachable(frame: FrameLocator, card: Locator, where: string): Promise<void> {
  for (const target of [card.locator('button', { hasText: 'Allow once' }), frame.locator('details.plan > summary')]) {
    await target.scrollIntoViewIfNeeded();
    const onTop = await target.evaluate((node) => {
      const r = node.getBoundingClientRect();
      return node.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
    });
    assert.equal(onTop, true, `${await target.evaluate((node) => node.textContent)} can be reached at ${where}`);
  }
  await readsCleanly(frame, `${where}, the card scrolled to`);
}

describe('e2e: the conversation in the Timeline', function () {
  let fake: FakeAnthropic;
  let wb: Workbench;
  let frame: FrameLocator;

  before(async () => {
    fake = await scriptedModel();
    wb = await openAgentWorkbench(fake.url);
  });

  after(async () => {
    await wb?.close();
    await fake?.close();
  });

  it('composer, streamed text, inline approval, a follow-up instruction, a reload mid-run and a resume', async () => {
    await phase('starts a run from the composer; the model text streams into its step', async () => {
      frame = await openTimeline(wb.page);
      const input = frame.locator('textarea.composer-input');
      await input.click();
      await input.type('Check that the greeting');
      await input.press('Shift+Enter');
      await input.type('tests pass');
      assert.equal(await input.inputValue(), 'Check that the greeting\ntests pass', 'Shift+Enter adds a line');
      await input.fill(TASK);
      await input.press('Enter');
      await row(frame, TASK, 'run').waitFor({ timeout: 30_000 });
      const streaming = frame.locator('.detail .markdown.streaming');
      await streaming.waitFor({ timeout: 30_000 });
      const partial = (await streaming.textContent()) ?? '';
      assert.ok(partial.length > 0 && partial.length < PLAN.length, `part of the text before the rest: ${partial}`);
      console.log(`      screenshot: ${await wb.screenshot('conversation-1-streaming')}`);
    });

    await phase('the command waits inline; allowed once, it runs and the run completes', async () => {
      const card = frame.locator('.approvals .approval', { hasText: 'node test.js' });
      await card.waitFor({ timeout: 30_000 });
      assert.equal(await card.locator('button', { hasText: 'Allow for this run' }).count(), 1);
      console.log(`      screenshot: ${await wb.screenshot('conversation-2-approval')}`);
      await pinnedPlan(frame);
      // Each width and theme: checked as the shot shows it, then with the card scrolled to.
      await shots(wb, 'plan', { prefix: 'conversation', before: (shot) => readsCleanly(frame, shot) });
      for (const width of [800, 300]) {
        await setSideBarWidth(wb.page, width);
        await reachable(frame, card, `${width} px`);
      }
      await card.locator('button', { hasText: 'Allow once' }).click();
      await waitUntil('the run to complete', async () => (await runTitle(frame)).includes('Status: completed'));
      // The model left its plan's first step in progress: a completed run says where it was left, not "now".
      await frame
        .locator('.conversation > details.plan .plan-progress', { hasText: `left at: ${STEPS[0]!.step}` })
        .waitFor({ timeout: 10_000 });
      await row(frame, /run `node test\.js` -> exit 1/, 'step').waitFor({ timeout: 10_000 });
      await row(frame, 'The tests ran: one case fails', 'step').click();
      await frame.locator('.detail .markdown strong', { hasText: 'one case fails' }).waitFor();
      await frame.locator('.detail .code-block button.copy').waitFor();
      console.log(`      screenshot: ${await wb.screenshot('conversation-3-completed')}`);
    });

    await phase('a follow-up instruction continues the completed run; reloading mid-answer, then resuming, finishes it', async () => {
      const input = frame.locator('textarea.composer-input');
      await frame.locator('.composer-mode', { hasText: 'Continue' }).waitFor();
      await input.fill(FOLLOW_UP);
      await input.press('Enter');
      await row(frame, `You: ${FOLLOW_UP}`, 'step').waitFor({ timeout: 30_000 });
      await frame.locator('.detail .markdown.streaming').waitFor({ timeout: 30_000 });
      console.log(`      screenshot: ${await wb.screenshot('conversation-4-follow-up-streaming')}`);
      await wb.page.reload();
      await wb.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      frame = await openTimeline(wb.page);
      await row(frame, TASK, 'run').waitFor({ timeout: 45_000 });
      await row(frame, `You: ${FOLLOW_UP}`, 'step').waitFor({ timeout: 30_000 });
      // The window's run stopped with the reload, its answer unfinished: it is offered for resume.
      await waitUntil('the run to stop', async () => !(await runTitle(frame)).includes('Status: running'), 60_000);
      assert.doesNotMatch(await runTitle(frame), /Status: completed/, 'the cut answer cannot have finished the run');
      await frame.locator('.conversation > details.plan .plan-progress', { hasText: '0 of 3 done; left at:' }).waitFor({ timeout: 10_000 });
      console.log(`      screenshot: ${await wb.screenshot('conversation-5-after-reload')}`);
      const run = row(frame, TASK, 'run');
      await run.click();
      await run.hover();
      await run.locator('button[data-action="resume"]').click();
      await waitUntil('the resumed run to complete', async () => (await runTitle(frame)).includes('Status: completed'), 60_000);
      assert.equal(followUpAsked, 2, 'the resume asked for the follow-up answer again');
      await row(frame, 'The case with three names fails', 'step').waitFor({ timeout: 30_000 });
      console.log(`      screenshot: ${await wb.screenshot('conversation-6-resumed')}`);
    });
  });
});
