// npm run bench:timeline: a 10,000-step run painted by the real webview bundle in headless
// Chromium. Prints one JSON object.
import { buildRunView, runDelta } from '../../src/protocol/build';
import { sampleRun } from '../unit/webview/fixtures';
import type { Page } from 'playwright-core';
import { openTimelinePage, post, postAndTimePaint } from './timelinePage';

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

async function main(): Promise<void> {
  const sample = sampleRun(STEPS, { running: true });
  const view = buildRunView(sample.state, sample.live, true);
  const { browser, page, problems } = await openTimelinePage('dark');
  try {
    const firstPaint = await postAndTimePaint(page, { type: 'snapshot', runs: [view] });
    const rowsAfterSnapshot = await page.locator('.row').count();
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) warm.push(await postAndTimePaint(page, { type: 'snapshot', runs: [view] }));

    // Follow the tail as a live run does, then append one step at a time.
    await page.evaluate(() => {
      const tree = document.querySelector('.tree')!;
      tree.scrollTop = tree.scrollHeight;
    });
    await page.waitForTimeout(50);
    let previous = view;
    const appendTimes: number[] = [];
    const deltaTimes: number[] = [];
    for (let i = 1; i <= APPENDS; i++) {
      const next = buildRunView(sampleRun(STEPS + i, { running: true }).state, sample.live, true);
      const t0 = performance.now();
      const delta = runDelta(previous, next);
      deltaTimes.push(performance.now() - t0);
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
        append_step_ms: round(median(appendTimes)),
        append_step_max_ms: round(Math.max(...appendTimes)),
        host_delta_ms: round(median(deltaTimes)),
        stream_paint_ms_p95: round(streamPaint),
        scroll_frame_p95_ms: round(scroll),
        dom_rows: domRows,
        dom_rows_after_snapshot: rowsAfterSnapshot,
        appended_row_painted: lastLabelPainted === 1,
        malformed_message_ignored: rowsAfterMalformed === rowsBeforeMalformed && rowsAfterMalformed > 0,
        page_errors: problems.filter((p) => !p.includes('rejected host message')),
        target_first_paint_ms: 200,
        target_host_delta_ms: 2,
        target_stream_paint_ms_p95: 100,
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
