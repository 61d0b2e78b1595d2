// npm run bench:timeline: a 10,000-step run painted by the real webview bundle in headless
// Chromium. Prints one JSON object.
import { buildRunView, runDelta } from '../../src/host/vscode/timeline/view-build';
import type { LiveState } from '../../src/core/patches/schema';
import type { RunSummary } from '../../src/core/store/contract';
import type { StoredRecord } from '../../src/core/store/records';
import { TimelineSync } from '../../src/host/vscode/timeline/sync';
import { recordsBetween, sampleRun } from '../unit/webview/fixtures';
import { loadavg } from 'node:os';
import type { Page } from 'playwright-core';
import { openTimelinePage, post, postAndTimePaint } from './timelinePage';
import { streamE2eMs } from './timeline-stream';

const STEPS = 10_000;
const APPENDS = 15;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

const round = (n: number) => Math.round(n * 10) / 10;

/** p95 of ms from a streamed text chunk's arrival to the frame that shows it, in the step and the open panel. */
async function streamPaintP95(page: Page, runId: string, stepId: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 40; i++) {
    times.push(await postAndTimePaint(page, { type: 'stream', runId, stepId: stepId + 1, text: `word${i} `, at: Date.now() }));
  }
  const painted = await page.locator('.detail .markdown.streaming', { hasText: 'word39' }).count();
  if (painted !== 1) throw new Error('the streamed text was not painted in the open step');
  return times.sort((a, b) => a - b)[Math.floor(times.length * 0.95)]!;
}

/** The runtime's records of APPENDS more steps, one commit group per checkpoint, as the session appends them. */
function commitGroups(before: ReturnType<typeof sampleRun>, after: ReturnType<typeof sampleRun>): StoredRecord[][] {
  const groups: StoredRecord[][] = [[]];
  for (const record of recordsBetween(before.state, after.state)) {
    groups.at(-1)!.push(record);
    if (record.type === 'checkpoint') groups.push([]);
  }
  return groups.filter((g) => g.length > 0);
}

/**
 * Median ms the host takes from a commit group the runtime emitted to the message for the view
 * (TimelineSync over an in-memory backend: the fold, the rows of the touched step, the delta).
 */
/** The host's Timeline over an in-memory backend holding one run (`reads` counts its reads of the run). */
function hostOver(sample: ReturnType<typeof sampleRun>, live: ReadonlyMap<string, LiveState>) {
  const { run } = sample.state;
  const summary: RunSummary = {
    runId: run.runId,
    task: run.task,
    createdAt: run.createdAt,
    status: 'running',
    updatedAt: 0,
    steps: STEPS,
    leased: true,
  };
  const counter = { reads: 0 };
  const sync = new TimelineSync({
    listRuns: async () => [summary],
    readRun: async () => (counter.reads++, sample.state),
    liveStates: async (patches) => new Map(patches.map((p) => [p.patchId, live.get(p.patchId) ?? 'applied'])),
  });
  return { sync, counter };
}

async function hostDeltaMs(): Promise<{ median: number; reads: number }> {
  const base = sampleRun(STEPS);
  const grown = sampleRun(STEPS + APPENDS);
  const { run } = base.state;
  const { sync, counter } = hostOver(base, grown.live);
  await sync.snapshot();
  const times: number[] = [];
  for (const group of commitGroups(base, grown)) {
    const t0 = performance.now();
    sync.recordsChanged(run.runId, group);
    const messages = await sync.apply({ runs: false, records: [run.runId], paths: [] });
    times.push(performance.now() - t0);
    if (messages.length !== 1) throw new Error(`a commit group gave ${messages.length} messages`);
  }
  return { median: median(times), reads: counter.reads };
}

async function main(): Promise<void> {
  const hostDelta = await hostDeltaMs();
  const streamE2e = await streamE2eMs();
  const sample = sampleRun(STEPS, { running: true });
  const view = buildRunView(sample.state, sample.live, true);
  // What the host sends when the view opens: the first steps, then the rest in chunks.
  const [snapshot, ...chunks] = await hostOver(sample, sample.live).sync.snapshot();
  const { browser, page, problems } = await openTimelinePage('dark');
  try {
    const firstPaint = await postAndTimePaint(page, snapshot);
    const rowsAfterSnapshot = await page.locator('.row').count();
    let wholeRun = firstPaint;
    for (const chunk of chunks) wholeRun += await postAndTimePaint(page, chunk);
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) {
      warm.push(await postAndTimePaint(page, snapshot));
      for (const chunk of chunks) await post(page, chunk);
    }

    // Follow the tail as a live run does, then append one step at a time.
    await page.evaluate(() => {
      const tree = document.querySelector('.tree')!;
      tree.scrollTop = tree.scrollHeight;
    });
    await page.waitForTimeout(50);
    let previous = view;
    const appendTimes: number[] = [];
    for (let i = 1; i <= APPENDS; i++) {
      const next = buildRunView(sampleRun(STEPS + i, { running: true }).state, sample.live, true);
      const delta = runDelta(previous, next);
      appendTimes.push(await postAndTimePaint(page, delta));
      previous = next;
    }
    const lastLabelPainted = await page.locator('.row .meta', { hasText: `Step ${STEPS + APPENDS} ·` }).count();
    const streamPaint = await streamPaintP95(page, previous.header.runId, STEPS + APPENDS);
    const domRows = await page.locator('.row').count();
    const scroll = await page.evaluate(async () => {
      const tree = document.querySelector('.tree')!;
      const times: number[] = [];
      for (let i = 0; i < 30; i++) {
        const t0 = performance.now();
        tree.scrollTop = (i * 9973) % tree.scrollHeight;
        await new Promise((r) => requestAnimationFrame(r));
        times.push(performance.now() - t0);
      }
      return times.sort((a, b) => a - b)[Math.floor(times.length * 0.95)]!;
    });
    const rowsBeforeMalformed = await page.locator('.row').count();
    await post(page, { type: 'snapshot', runs: 'not an array' });
    const rowsAfterMalformed = await page.locator('.row').count();
    console.log(
      JSON.stringify({
        steps: STEPS,
        first_paint_ms: round(firstPaint),
        first_paint_warm_median_ms: round(median(warm)),
        // Every step painted: the snapshot and the chunks after it, each to its frame.
        whole_run_paint_ms: round(wholeRun),
        snapshot_chunks: chunks.length,
        append_step_ms: round(median(appendTimes)),
        append_step_max_ms: round(Math.max(...appendTimes)),
        host_delta_ms: round(hostDelta.median),
        host_reads_while_appending: hostDelta.reads - 1,
        stream_paint_ms_p95: round(streamPaint),
        // The same text from the fake API's write to the painted webview of the real workbench (timeline-stream.ts).
        stream_e2e_ms_p95: round(streamE2e.p95),
        stream_e2e_ms_median: round(streamE2e.median),
        stream_e2e_tokens: streamE2e.tokens,
        // Where the time goes, each part's p95 and median: wire to the host's text event, the host's post to the webview's message, the message to the text in the DOM, the DOM to its painted frame.
        stream_e2e_parts_ms: streamE2e.parts,
        scroll_frame_p95_ms: round(scroll),
        dom_rows: domRows,
        dom_rows_after_snapshot: rowsAfterSnapshot,
        appended_row_painted: lastLabelPainted === 1,
        malformed_message_ignored: rowsAfterMalformed === rowsBeforeMalformed && rowsAfterMalformed > 0,
        page_errors: problems.filter((p) => !p.includes('rejected host message')),
        target_first_paint_ms: 200,
        target_host_delta_ms: 2,
        target_stream_paint_ms_p95: 100,
        target_stream_e2e_ms_p95: 100,
        load1: round(loadavg()[0] ?? 0),
      }),
    );
  } finally {
    await browser.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
