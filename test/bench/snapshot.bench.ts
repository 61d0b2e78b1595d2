// Snapshot cost of one edited file: ours (patch: blobs + expected-hash write) in a 10-file vs a
// 50,000-file workspace, and a shadow git repository (`git add -A && git commit`) of the 50k one.
// Prints ONE JSON object.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLog, systemClock } from '../../src/core/ports';
import { applyPreparedWrite, prepareWrite, type BlobStore } from '../../src/core/patches/record';
import { NodeWorkspace } from '../../src/host/node/node-workspace';
import { openFileStore } from '../../src/host/node/store-factory';

const FILES_LARGE = Number(process.env.SNAPSHOT_FILES ?? 50_000);
const SAMPLES = 21;
const EDITED = 'd000/f00007.txt';

function buildWorkspace(dir: string, files: number): void {
  const perDir = 100;
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `d${String(Math.floor(i / perDir)).padStart(3, '0')}`);
    if (i % perDir === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${String(i % perDir).padStart(5, '0')}.txt`), `file ${i}\n${'x'.repeat(200)}\n`);
  }
}

function duBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    total += entry.isDirectory() ? duBytes(full) : statSync(full).size;
  }
  return total;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function recordOnce(ws: NodeWorkspace, blobs: BlobStore, n: number): Promise<{ ms: number; recordBytes: number }> {
  const content = new TextEncoder().encode(`edited ${n}\n${'y'.repeat(200)}\n`);
  const started = performance.now();
  const write = await prepareWrite(ws, EDITED, content);
  const patch = await applyPreparedWrite({ workspace: ws, blobs, clock: systemClock, log: silentLog, newId: () => `p${n}` }, { runId: 'bench', stepId: n, toolCallId: `c${n}` }, write);
  const ms = performance.now() - started;
  return { ms, recordBytes: Buffer.byteLength(JSON.stringify(patch)) };
}

/** `durable`: git fsyncs what it commits (core.fsync), as our store and workspace writes do. */
function timeShadowCommit(gitDir: string, workTree: string, message: string, durable = false): number {
  const fsync = durable ? ['-c', 'core.fsync=committed,index', '-c', 'core.fsyncMethod=fsync'] : [];
  const env = { ...process.env, GIT_DIR: gitDir, GIT_WORK_TREE: workTree, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
  const started = performance.now();
  execFileSync('git', [...fsync, 'add', '-A'], { env, cwd: workTree, stdio: 'ignore' });
  execFileSync('git', [...fsync, 'commit', '-q', '--allow-empty', '-m', message], { env, cwd: workTree, stdio: 'ignore' });
  return performance.now() - started;
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'ac-snapshot-bench-'));
  try {
    const small = join(base, 'ws10');
    const large = join(base, 'ws50k');
    buildWorkspace(small, 10);
    buildWorkspace(large, FILES_LARGE);
    execFileSync('git', ['init', '-q', large]);
    const wsSmall = new NodeWorkspace({ roots: [small] });
    const wsLarge = new NodeWorkspace({ roots: [large] });
    // The real durable store (blobs/ab/<sha256>, temp + fsync + rename + folder fsync, deduplicated).
    const blobsSmall = openFileStore(join(base, 'store-small'));
    const blobsLarge = openFileStore(join(base, 'store-large'));
    execFileSync('sync');
    await recordOnce(wsSmall, blobsSmall, -1);
    await recordOnce(wsLarge, blobsLarge, -1);
    const smallMs: number[] = [];
    const largeMs: number[] = [];
    let recordBytes = 0;
    for (let i = 0; i < SAMPLES; i++) {
      smallMs.push((await recordOnce(wsSmall, blobsSmall, i)).ms);
      const large1 = await recordOnce(wsLarge, blobsLarge, i);
      largeMs.push(large1.ms);
      recordBytes = large1.recordBytes;
    }
    const oursMs = median(largeMs);
    // Per edit: the new blob(s) it stored plus its patch record (the journal line).
    const bytesOurs = duBytes(join(base, 'store-large')) / (SAMPLES + 1) + recordBytes;

    const shadow = join(base, 'shadow.git');
    execFileSync('git', ['init', '-q', '--bare', shadow]);
    const firstMs = timeShadowCommit(shadow, large, 'initial');
    const bytesAfterFirst = duBytes(shadow);
    const stepMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      writeFileSync(join(large, EDITED), `shadow edit ${i}\n`);
      stepMs.push(timeShadowCommit(shadow, large, `step ${i}`));
    }
    const durableMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      writeFileSync(join(large, EDITED), `shadow durable edit ${i}\n`);
      durableMs.push(timeShadowCommit(shadow, large, `durable step ${i}`, true));
    }
    const shadowMs = median(durableMs);
    const result = {
      files_small: 10,
      files_large: FILES_LARGE,
      ours_ms_10: Number(median(smallMs).toFixed(3)),
      ours_ms_50k: Number(oursMs.toFixed(3)),
      ratio_50k_vs_10: Number((oursMs / median(smallMs)).toFixed(3)),
      shadow_git_first_commit_ms: Math.round(firstMs),
      shadow_git_step_ms: Number(shadowMs.toFixed(1)),
      shadow_git_ratio: Number((shadowMs / oursMs).toFixed(1)),
      shadow_git_step_nofsync_ms: Number(median(stepMs).toFixed(1)),
      shadow_git_nofsync_ratio: Number((median(stepMs) / oursMs).toFixed(1)),
      shadow_git_first_ratio: Number((firstMs / oursMs).toFixed(1)),
      bytes_ours: Math.round(bytesOurs),
      bytes_shadow_git: duBytes(shadow),
      bytes_shadow_git_first_snapshot: bytesAfterFirst,
      samples: SAMPLES,
    };
    console.log(JSON.stringify(result));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

void main();
