// Inline review speed. Prints ONE JSON object.
// mark_file_200_hunks_ms: a 2,000-line file whose agent patch has 200 hunks, after the person typed
//   above and inside it: locate every hunk in the live text and compute the lines to mark (the code
//   the editor runs on each change; the hunks of a patch are computed once and cached, measured
//   apart as hunks_200_diff_ms).
// conflict_scan_1000_ms: 1,000 pending patches (one per file, 3 hunks each) against live buffer texts,
//   a tenth of them edited by the person: hash each live text, classify each patch (applied /
//   conflict) and locate every hunk (waiting / edited).
// Figures are the median of RUNS runs (wall clock).
import { performance } from 'node:perf_hooks';
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

const big = bigFile();
const many = manyPatches();
console.log(
  JSON.stringify({
    mark_file_200_hunks_ms: big.markMs,
    conflict_scan_1000_ms: many.scanMs,
    hunks_200_diff_ms: big.diffMs,
    hunks_in_file: big.hunks,
    hunks_waiting_after_typing: big.waiting,
    lines_marked: big.marks,
    patches_scanned: many.patches,
    patches_in_conflict: many.conflicts,
    hunks_edited: many.edited,
    runs: RUNS,
    targets: { mark_file_200_hunks_ms: 50, conflict_scan_1000_ms: 50 },
  }),
);
