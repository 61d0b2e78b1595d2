// bench:window: the editor with many long runs. WINDOW_RUNS runs (20) of WINDOW_STEPS light steps
// (7,000: ~150 MB of journal) in one store, another process holding one run and heartbeating.
// Drives the window's host-side classes in plain Node, with a fake `vscode` (fake-vscode.ts; no
// editor): the window's run model (RunModel, over the store's change and lease notices), the
// palette state (ContextKeys) and the review model.
// Prints ONE JSON object:
//   open_ms: the window opens: the run listing with its facts and the palette state set;
//   heartbeat_reads: journals read while the other process heartbeats (target 0);
//   review_reload_ms: the review's full reload from disk (every run with pending patches read whole);
//   keep_ms_p95: a Keep through the feed (light path, the review folds the records it appended);
//   palette_state_ms: the palette state after a change (the listing read again), median;
//   timeline_opening_ms: the Timeline's first message (one run read: sync.opening); timeline_all_runs_ms: every run's;
//   before: the same window on main's way of doing it (every run read whole for the palette state;
//   every heartbeat a "runs" event that re-read every run for the review; the Timeline's first
//   message after every run was read).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import Module from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openFileStore } from '../../src/host/node/store-factory';
import { buildRuns, CountingFs, percentile, runIdOf } from './many-runs';

const RUNS = Number(process.env.WINDOW_RUNS ?? 20);
const STEPS = Number(process.env.WINDOW_STEPS ?? 7000);
const BEAT_MS = 250;
const KEEPS = 40;

// `vscode` resolves to the fake for the host classes loaded below.
const resolve = (Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string })._resolveFilename;
(Module as unknown as { _resolveFilename: typeof resolve })._resolveFilename = function (request: string, ...rest: unknown[]) {
  return resolve.call(this, request === 'vscode' ? join(__dirname, 'fake-vscode.ts') : request, ...rest);
};

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const round = (ms: number) => Math.round(ms * 10) / 10;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const { RunModel } = await import('../../src/host/vscode/window/run-model');
  const { ContextKeys } = await import('../../src/host/vscode/window/context-keys');
  const { ReviewModel } = await import('../../src/host/vscode/review/model');
  const { TimelineSync } = await import('../../src/host/vscode/timeline/sync');
  const root = mkdtempSync(join(tmpdir(), 'bench-window-'));
  const holder = { kill: () => undefined as unknown };
  try {
    const journalBytes = await buildRuns(root, RUNS, STEPS);
    const fs = new CountingFs();
    const log = { log: () => undefined };

    // Before: main's palette state read every recent run whole.
    const plain = openFileStore(root, { fs, timers: undefined });
    let t0 = performance.now();
    for (const run of await plain.listRuns()) await plain.readRun(run.runId);
    const paletteBefore = performance.now() - t0;

    // The window opens.
    t0 = performance.now();
    const feed = new RunModel(openFileStore(root, { fs, timers: undefined }));
    const keys = new ContextKeys(feed, log, () => undefined);
    await keys.refresh();
    const openMs = performance.now() - t0;
    // The Timeline opens on it: its first message (one run read), and every run (main's way before: all read before the first message).
    const timeline = () =>
      new TimelineSync({
        listRuns: () => feed.listRuns(),
        readRun: (id) => feed.store.readRun(id),
        liveStates: async (patches) => new Map(patches.map((p) => [p.patchId, 'applied' as const])),
      });
    t0 = performance.now();
    await timeline().opening();
    const timelineOpeningMs = performance.now() - t0;
    t0 = performance.now();
    await timeline().snapshot();
    const timelineAllMs = performance.now() - t0;
    const model = new ReviewModel({
      source: { listRuns: () => feed.listRuns(), readRun: (id) => feed.store.readRun(id), getBlob: (h) => feed.store.getBlob(h) },
      readLive: async () => '',
      log: () => undefined,
    });
    feed.onDidChange((event) => {
      if (event.kind === 'runs') void model.reloadAll();
      else if (event.kind !== 'records') return;
      else if (event.records) void model.recordsAppended(event.runId, event.records);
      else void model.reloadRun(event.runId);
    });
    // The store's notices: appends of other holders, and its lease notice (the lease files).
    feed.watch();
    t0 = performance.now();
    await model.reloadAll(true);
    const reviewReloadMs = performance.now() - t0;

    // Another process holds the newest run and heartbeats.
    const child = spawn(
      process.execPath,
      [...process.execArgv, join(__dirname, 'window-holder.ts'), root, runIdOf(RUNS - 1), String(BEAT_MS)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    holder.kill = () => child.kill('SIGKILL');
    let beats = 0;
    await new Promise<void>((ready) =>
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('holding')) ready();
        beats += chunk.toString().split('beat').length - 1;
      }),
    );
    await sleep(1000); // the lease taken is a change of the listing (no journal)
    await model.settled();
    const readsBefore = fs.journalReads;
    const beatsBefore = beats;
    await sleep(BEAT_MS * 12);
    await model.settled();
    const heartbeatReads = fs.journalReads - readsBefore;
    const heartbeats = beats - beatsBefore;

    // Keeps through the feed on the runs no one else holds.
    const keepTimes: number[] = [];
    const keysTimes: number[] = [];
    for (let k = 0; k < KEEPS; k++) {
      const runId = runIdOf(k % (RUNS - 1));
      const patchId = `${runId}-p${k + 1}`;
      t0 = performance.now();
      await feed.appendDecisions(runId, [
        { type: 'review', decision: 'keep', hunks: [{ patchId, hunk: 0 }] },
        { type: 'patch_state', patchId, state: 'accepted', reason: 'every hunk kept in review' },
      ]);
      await model.settled();
      keepTimes.push(performance.now() - t0);
      t0 = performance.now();
      await keys.refresh();
      keysTimes.push(performance.now() - t0);
    }
    keys.dispose();
    feed.dispose();
    console.log(
      JSON.stringify({
        runs: RUNS,
        journal_mb: Math.round(journalBytes / 2 ** 20),
        open_ms: round(openMs),
        heartbeat_reads: heartbeatReads,
        review_reload_ms: round(reviewReloadMs),
        keep_ms_p95: percentile(keepTimes, 95),
        palette_state_ms: round(median(keysTimes)),
        timeline_opening_ms: round(timelineOpeningMs),
        timeline_all_runs_ms: round(timelineAllMs),
        heartbeats_seen: heartbeats,
        steps_per_run: STEPS,
        driven: 'host classes in Node with a fake vscode (RunModel, ContextKeys, ReviewModel); no editor',
        before: { palette_state_ms: round(paletteBefore), heartbeat_reads_per_beat: RUNS, timeline_first_message_ms: round(timelineAllMs) },
        load_average: loadavg().map((l) => Math.round(l * 100) / 100),
        targets: { heartbeat_reads: 0, open_ms: 300, palette_state_ms: 20, timeline_opening_ms: 300 },
      }),
    );
  } finally {
    holder.kill();
    rmSync(root, { recursive: true, force: true });
  }
}

void main().then(() => process.exit(0));
