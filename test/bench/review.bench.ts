// Inline review speed. Prints ONE JSON object.
// mark_file_200_hunks_ms: a 2,000-line file whose agent patch has 200 hunks, after the person typed
//   above and inside it: locate every hunk in the live text and compute the lines to mark (the code
//   the editor runs on each change; the hunks of a patch are computed once and cached, measured
//   apart as hunks_200_diff_ms).
// conflict_scan_1000_ms: 1,000 pending patches (one per file, 3 hunks each) against live buffer texts,
//   a tenth of them edited by the person: hash each live text, classify each patch (applied /
//   conflict) and locate every hunk (waiting / edited).
// keep_ms_p95: a Keep (a review record and the patch's accept) in a store of KEEP_RUNS runs of
//   KEEP_STEPS steps (10 x 10,000; light steps of many-runs.ts), as the window makes it: the store's
//   light path (appendDecisions) and the review's fold of the records it appended; 95th percentile of
//   KEEPS keeps. reads_per_keep: journals read per keep (target 0).
// Figures are the median of RUNS runs (wall clock).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadRunReview, withRecords, type HunkCache, type RunReview } from '../../src/core/patches/review-load';
import { openFileStore } from '../../src/host/node/store-factory';
import { buildRuns, CountingFs, percentile, runIdOf } from './many-runs';
import { classifyHash } from '../../src/core/patches/classify';
import { hashContent } from '../../src/core/patches/hash';
import { reviewFile, type PendingPatch } from '../../src/core/patches/review';
import { reviewHunksOf } from '../../src/core/patches/review-hunks';
import type { Patch } from '../../src/core/patches/schema';
import { markLines } from '../../src/host/vscode/review/mark-lines';

const RUNS = 15;
const encoder = new TextEncoder();
const hash = (text: string) => hashContent(encoder.encode(text));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 100) / 100;
}

function time(work: () => void): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    work();
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

function patchOf(id: string, path: string, before: string, after: string): Patch {
  return {
    patchId: id,
    runId: 'bench',
    stepId: 1,
    toolCallId: `c-${id}`,
    path,
    op: 'modify',
    beforeHash: hash(before),
    afterHash: hash(after),
    added: 0,
    removed: 0,
    binary: false,
    createdAt: 0,
    state: 'pending',
  };
}

const fileLines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `const ${tag}_${i} = compute(${i}, "${tag}");\n`);

function bigFile() {
  const before = fileLines(2000, 'v');
  const after = before.map((line, i) => (i % 10 === 5 ? line.replace('compute', 'computeFaster') : line));
  const beforeText = before.join('');
  const afterText = after.join('');
  let hunks = reviewHunksOf('big.ts', beforeText, afterText);
  const diffMs = time(() => {
    hunks = reviewHunksOf('big.ts', beforeText, afterText);
  });
  const pending: PendingPatch[] = [{ patch: patchOf('big', 'big.ts', beforeText, afterText), hunks }];
  const typed = [...after];
  typed.splice(0, 0, '// the person typed here\n');
  typed[1006] = 'const edited_by_the_person = 1;\n';
  const live = typed.join('');
  let marks = 0;
  let waiting = 0;
  const markMs = time(() => {
    const views = reviewFile(live, pending);
    waiting = views.filter((v) => v.state === 'waiting').length;
    marks = markLines(views, typed.length - 1).length;
  });
  return { hunks: hunks.length, waiting, marks, diffMs, markMs };
}

function manyPatches() {
  const files: Array<{ pending: PendingPatch[]; live: string }> = [];
  for (let f = 0; f < 1000; f++) {
    const before = fileLines(60, `f${f}`);
    const after = before.map((line, i) => (i === 5 || i === 30 || i === 55 ? `${line}// agent note ${i}\n` : line));
    const beforeText = before.join('');
    const afterText = after.join('');
    const patch = patchOf(`p${f}`, `src/f${f}.ts`, beforeText, afterText);
    const live = f % 10 === 0 ? afterText.replace('// agent note 30', '// the person rewrote this') : afterText;
    files.push({ pending: [{ patch, hunks: reviewHunksOf(patch.path, beforeText, afterText) }], live });
  }
  let conflicts = 0;
  let edited = 0;
  const scanMs = time(() => {
    conflicts = 0;
    edited = 0;
    for (const file of files) {
      const liveHash = hash(file.live);
      if (classifyHash(file.pending[0]!.patch, liveHash) === 'conflict') conflicts++;
      for (const view of reviewFile(file.live, file.pending)) if (view.state === 'edited') edited++;
    }
  });
  return { patches: files.length, conflicts, edited, scanMs };
}

const KEEP_RUNS = Number(process.env.KEEP_RUNS ?? 10);
const KEEP_STEPS = Number(process.env.KEEP_STEPS ?? 10_000);
const KEEPS = 100;

async function keeps() {
  const root = mkdtempSync(join(tmpdir(), 'bench-keep-'));
  try {
    const journalBytes = await buildRuns(root, KEEP_RUNS, KEEP_STEPS);
    const fs = new CountingFs();
    const store = openFileStore(root, { fs, timers: undefined });
    // The window opened every run once (a run it has never seen): not what a Keep costs.
    const cache: HunkCache = new Map();
    const reviews = new Map<string, RunReview | undefined>();
    for (let i = 0; i < KEEP_RUNS; i++) reviews.set(runIdOf(i), await loadRunReview(store, runIdOf(i), cache));
    const reads = fs.journalReads;
    const times: number[] = [];
    for (let k = 0; k < KEEPS; k++) {
      const runId = runIdOf(k % KEEP_RUNS);
      const patchId = `${runId}-p${k + 1}`;
      const t0 = performance.now();
      const stored = await store.appendDecisions(runId, [
        { type: 'review', decision: 'keep', hunks: [{ patchId, hunk: 0 }] },
        { type: 'patch_state', patchId, state: 'accepted', reason: 'every hunk kept in review' },
      ]);
      reviews.set(runId, await withRecords(store, runId, reviews.get(runId), stored, cache));
      times.push(performance.now() - t0);
    }
    const pendingAfter = reviews.get(runIdOf(0))!.patches.get(`${runIdOf(0)}-p1`)?.state;
    if (pendingAfter !== 'accepted') throw new Error(`the keep did not land: ${pendingAfter}`);
    return { keepP95: percentile(times, 95), readsPerKeep: (fs.journalReads - reads) / KEEPS, journalMb: journalBytes / 2 ** 20 };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const big = bigFile();
const many = manyPatches();
void keeps().then((keep) =>
  console.log(
    JSON.stringify({
      mark_file_200_hunks_ms: big.markMs,
      conflict_scan_1000_ms: many.scanMs,
      keep_ms_p95: keep.keepP95,
      reads_per_keep: keep.readsPerKeep,
      hunks_200_diff_ms: big.diffMs,
      hunks_in_file: big.hunks,
      hunks_waiting_after_typing: big.waiting,
      lines_marked: big.marks,
      patches_scanned: many.patches,
      patches_in_conflict: many.conflicts,
      hunks_edited: many.edited,
      keep_store: { runs: KEEP_RUNS, steps: KEEP_STEPS, journal_mb: Math.round(keep.journalMb), keeps: KEEPS },
      runs: RUNS,
      load_average: loadavg().map((l) => Math.round(l * 100) / 100),
      targets: { mark_file_200_hunks_ms: 50, conflict_scan_1000_ms: 50, keep_ms_p95: 20, reads_per_keep: 0 },
    }),
  ),
);
