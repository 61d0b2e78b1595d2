// A run survives a dropped connection and a window reload. A dropped browser leaves its extension
// host alive (the server's reconnection grace) and holding the run: the window opened again lists
// the run as held by another window and takes it over after the person confirms. A reload ends
// the old extension host: the run is listed as interrupted and resumed. Either way the cut
// command is never run twice. Screenshots reconnect-*.png go to test-results/screenshots/.
// The command writes in its copy-on-write view (its writes reach the workspace when it ends):
// after a reload its view, left by a host that is gone, is settled at the resume (applied, nobody
// asked); taken over from a host still alive, the view is that host's, so the person is asked.
import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { openAgentWorkbench, waitUntil } from '../support/e2e-story';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic/server';
import { openTimeline, paletteEntries, SCREENSHOT_DIR, type Workbench } from '../support/workbench';

const TASK = 'Run the long check';

function scriptedModel(): Promise<FakeAnthropic> {
  const turns = [
    {
      content: [
        { type: 'tool_use' as const, id: 'toolu_long', name: 'run_command', input: { command: 'echo ran >> marker.txt; sleep 90' } },
      ],
      stop_reason: 'tool_use',
    },
    { content: [{ type: 'text' as const, text: 'Done after the interruption.' }], stop_reason: 'end_turn' },
  ];
  return startFakeAnthropic((request) => {
    const messages = (request.body as { messages?: Array<{ role: string }> }).messages ?? [];
    return turns[Math.min(messages.filter((m) => m.role === 'assistant').length, turns.length - 1)]!;
  });
}

async function clickDialogButton(page: Page, label: string): Promise<void> {
  const button = page.locator('.monaco-dialog-box .monaco-button', { hasText: label }).first();
  await button.waitFor({ timeout: 30_000 });
  await button.click();
}

function runRow(frame: FrameLocator) {
  return frame.locator('[role="treeitem"].kind-run', { hasText: TASK }).first();
}

async function shot(page: Page, name: string): Promise<void> {
  const file = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`      screenshot: ${file}`);
}

/** Starts the run from the palette, allows its command in the Timeline, and waits until the command has begun. */
async function startLongCommand(wb: Workbench): Promise<string> {
  const frame = await openTimeline(wb.page);
  await paletteEntries(wb.page, 'Agent: Run', 'Agent: Run');
  await wb.page.keyboard.press('Enter');
  const input = wb.page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(TASK);
  await wb.page.keyboard.press('Enter');
  const card = frame.locator('.approvals .approval', { hasText: 'sleep 90' });
  await card.waitFor({ timeout: 30_000 });
  await card.locator('button', { hasText: 'Allow once' }).click();
  const marker = join(wb.workspace, 'marker.txt');
  const views = join(wb.server.userDataDir, 'User', 'globalStorage');
  await waitUntil('the command to start (its write in its view)', () => inView(views, 'marker.txt', 8) === 'ran\n');
  assert.equal(existsSync(marker), false, 'nothing reaches the workspace while the command runs');
  return marker;
}

/** The content of the first file named `name` under a `command-views` folder below `dir` ('' when none yet). */
function inView(dir: string, name: string, depth: number, inViews = false): string {
  const entries = existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : [];
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (inViews && entry.isFile() && entry.name === name) return readFileSync(full, 'utf8');
    if (entry.isDirectory() && depth > 0) {
      const found = inView(full, name, depth - 1, inViews || entry.name === 'command-views');
      if (found !== '') return found;
    }
  }
  return '';
}

/** Clicks one of the run row's actions (they show on hover). */
async function rowAction(frame: FrameLocator, titleStart: string): Promise<void> {
  await runRow(frame).click();
  await runRow(frame).hover();
  await runRow(frame).locator(`button.action[title^="${titleStart}"]`).click();
}

async function rowText(frame: FrameLocator): Promise<string> {
  return `${(await runRow(frame).getAttribute('title')) ?? ''}\n${(await runRow(frame).textContent()) ?? ''}`;
}

/**
 * The cut command is never run again; the model answers; the run completes. `asked`: its view is
 * still another live host's, so the person says it is done (its write stays in that view); else its
 * view is settled: what it wrote is applied once, and nobody is asked.
 */
async function finishCutCall(
  page: Page,
  frame: FrameLocator,
  marker: string,
  fake: FakeAnthropic,
  name: string,
  asked: boolean,
): Promise<void> {
  if (asked) {
    await page.locator('.monaco-dialog-box', { hasText: 'run_command' }).waitFor({ timeout: 30_000 });
    await shot(page, `${name}-cut-call-question`);
    await clickDialogButton(page, 'Mark as done');
  }
  await waitUntil('the run to complete here', async () => (await rowText(frame)).includes('Status: completed'));
  await shot(page, `${name}-completed`);
  const written = existsSync(marker) ? readFileSync(marker, 'utf8') : '';
  if (asked) assert.ok(written === '' || written === 'ran\n', `never run twice: ${JSON.stringify(written)}`);
  else assert.equal(written, 'ran\n', 'what the cut command wrote in its view was applied once');
  assert.equal(await page.locator('.monaco-dialog-box', { hasText: 'run_command' }).count(), 0);
  assert.equal(fake.requests.length, 2, 'one model call before the interruption, one after it');
}

describe('e2e: a run survives a dropped connection and a window reload', function () {
  let fake: FakeAnthropic;
  let wb: Workbench;

  beforeEach(async () => {
    fake = await scriptedModel();
    wb = await openAgentWorkbench(fake.url);
  });

  afterEach(async () => {
    await wb?.close();
    await fake?.close();
  });

  it('connection dropped during a tool call: listed as held by the other window, taken over after confirmation, completed once', async () => {
    const marker = await startLongCommand(wb);
    const page = await wb.dropAndReopen();
    const frame = await openTimeline(page);
    await runRow(frame).waitFor({ timeout: 60_000 });
    await waitUntil('the run to show its holder', async () => /last progress .* · pid \d+/.test(await rowText(frame))).catch(
      async (error: unknown) => {
        await shot(page, 'reconnect-1-held-by-other-window');
        throw new Error(`${String(error)}; the row says: ${await rowText(frame)}`);
      },
    );
    await shot(page, 'reconnect-1-held-by-other-window');

    await rowAction(frame, 'Take over');
    await page.locator('.monaco-dialog-box', { hasText: 'Take over this run from another window' }).waitFor({ timeout: 30_000 });
    await shot(page, 'reconnect-2-take-over-question');
    await clickDialogButton(page, 'Take Over');
    await finishCutCall(page, frame, marker, fake, 'reconnect-3', true);
  });

  it('window reloaded during a tool call: listed as interrupted, resumed, completed once', async () => {
    const marker = await startLongCommand(wb);
    await wb.page.reload();
    await wb.page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const frame = await openTimeline(wb.page);
    await runRow(frame).waitFor({ timeout: 60_000 });
    await shot(wb.page, 'reconnect-4-after-reload');
    await rowAction(frame, 'Resume');
    await finishCutCall(wb.page, frame, marker, fake, 'reconnect-5', false);
  });
});
