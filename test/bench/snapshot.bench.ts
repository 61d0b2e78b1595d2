// Snapshot cost of one edited file in a 10-file vs a 50,000-file workspace: ours_ms_* the whole
// durable edit (blobs + expected-hash write + the patch record appended to the run's journal,
// fsynced). The headline shadow_git_ratio compares whole edits: a shadow git repository's (the
// file written and fsynced, then `git add -A && git commit` of the 50k workspace, fsynced) against
// ours; shadow_git_nofsync_ratio the same with git and its write not fsynced (ours still durable).
// shadow_git_recording_ratio sets the recording alone (the edit untimed on both sides) side by side.
// Prints ONE JSON object.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
  type Dirent,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLog, systemClock } from '../../src/core/ports';
import { applyPreparedWrite, patchOfWrite, prepareWrite, storeWriteBlobs } from '../../src/core/patches/record';
import type { CheckpointStore, RunWriter } from '../../src/core/store/contract';
import { NodeWorkspace } from '../../src/host/node/node-workspace';
import { openFileStore } from '../../src/host/node/store-factory';

const FILES_LARGE = Number(process.env.SNAPSHOT_FILES ?? 50_000);
const SAMPLES = 61;
const EDITED = 'd000/f00007.txt';
/** The shadow repository's own edits go to another file, so that ours always finds its file as it left it. */
const SHADOW_EDITED = 'd000/f00008.txt';
/** A durable shadow commit after every this many samples of ours. */
const SHADOW_EVERY = 8;

function buildWorkspace(dir: string, files: number): void {
  const perDir = 100;
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `d${String(Math.floor(i / perDir)).padStart(3, '0')}`);
    if (i % perDir === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${String(i % perDir).padStart(5, '0')}.txt`), `file ${i}\n${'x'.repeat(200)}\n`);
  }
}

/** Bytes under dir; a file that vanishes meanwhile (git's detached gc removes its lock and loose objects) counts 0. */
function duBytes(dir: string): number {
  let total = 0;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) total += duBytes(full);
    else total += statSync(full, { throwIfNoEntry: false })?.size ?? 0;
  }
  return total;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Recorder {
  readonly ws: NodeWorkspace;
  readonly store: CheckpointStore;
  readonly writer: RunWriter;
}

async function recorder(workspaceDir: string, storeDir: string): Promise<Recorder> {
  const store = openFileStore(storeDir);
  const writer = await store.createRun({
    runId: 'bench',
    task: 'snapshot bench',
    createdAt: Date.now(),
    workspaceFolders: [workspaceDir],
    git: { isRepo: false, dirtyPaths: [] },
    settings: { model: 'm', provider: 'p', maxTurns: 1000, maxOutputTokensPerCall: 4096 },
  });
  return { ws: new NodeWorkspace({ roots: [workspaceDir] }), store, writer };
}

/** Recording one edited file, end to end: prepare, blobs, the write, the patch record in the journal. */
async function recordOnce({ ws, store, writer }: Recorder, n: number): Promise<{ ms: number; recordBytes: number }> {
  const content = new TextEncoder().encode(`edited ${n}\n${'y'.repeat(200)}\n`);
  const started = performance.now();
  const write = await prepareWrite(ws, EDITED, content);
  const patch = await applyPreparedWrite(
    { workspace: ws, blobs: store, clock: systemClock, log: silentLog, newId: () => `p${n}` },
    { runId: 'bench', stepId: n + 1, toolCallId: `c${n}` },
    write,
  );
  await writer.append([{ type: 'patch', patch }]);
  const ms = performance.now() - started;
  return { ms, recordBytes: Buffer.byteLength(JSON.stringify(patch)) };
}

/**
 * The recording alone, as `git add -A && git commit` is the shadow repository's recording alone:
 * the live content read and hashed, both blobs durable, the patch record durable in the journal.
 * The edit itself (our expected-hash durable write) happens between the two timed parts, untimed,
 * as the shadow repository's edit is untimed.
 */
async function recordingOnly({ ws, store, writer }: Recorder, n: number): Promise<number> {
  const content = new TextEncoder().encode(`recorded ${n}\n${'z'.repeat(200)}\n`);
  const started = performance.now();
  const write = await prepareWrite(ws, EDITED, content);
  const blobs = await storeWriteBlobs({ blobs: store }, write);
  const blobsMs = performance.now() - started;
  await ws.write(write.path, content, write.beforeHash);
  const appending = performance.now();
  const patch = patchOfWrite(
    { clock: systemClock, newId: () => `r${n}` },
    { runId: 'bench', stepId: n + 1, toolCallId: `r${n}` },
    write,
    blobs,
    false,
  );
  await writer.append([{ type: 'patch', patch }]);
  return blobsMs + (performance.now() - appending);
}

/** A shadow repository's whole edit: the file written (and fsynced when `durable`), then its commit. */
function timeShadowEdit(gitDir: string, workTree: string, text: string, durable: boolean): { edit: number; commit: number } {
  const started = performance.now();
  const fd = openSync(join(workTree, SHADOW_EDITED), 'w');
  writeSync(fd, text);
  if (durable) fsyncSync(fd);
  closeSync(fd);
  const write = performance.now() - started;
  const commit = timeShadowCommit(gitDir, workTree, text, durable);
  return { edit: write + commit, commit };
}

/** `durable`: git fsyncs what it commits (core.fsync), as our store and workspace writes do. */
function timeShadowCommit(gitDir: string, workTree: string, message: string, durable = false): number {
  const fsync = durable ? ['-c', 'core.fsync=committed,index', '-c', 'core.fsyncMethod=fsync'] : [];
  const env = {
    ...process.env,
    GIT_DIR: gitDir,
    GIT_WORK_TREE: workTree,
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@b',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@b',
  };
  const started = performance.now();
  execFileSync('git', [...fsync, 'add', '-A'], { env, cwd: workTree, stdio: 'ignore' });
  execFileSync('git', [...fsync, 'commit', '-q', '--allow-empty', '-m', message], { env, cwd: workTree, stdio: 'ignore' });
  return performance.now() - started;
}

/** git may still run a detached `gc --auto` in the shadow repository: retry the clean-up for a while. */
async function removeWhenGitIsDone(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch (error) {
      if (attempt >= 60) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'ac-snapshot-bench-'));
  try {
    const small = join(base, 'ws10');
    const large = join(base, 'ws50k');
    buildWorkspace(small, 10);
    buildWorkspace(large, FILES_LARGE);
    execFileSync('git', ['init', '-q', large]);
    // The real durable store (blobs/ab/<sha256>, temp + fsync + rename + folder fsync, deduplicated;
    // the journal appended and fsynced per commit group).
    const smallRec = await recorder(small, join(base, 'store-small'));
    const largeRec = await recorder(large, join(base, 'store-large'));
    // The shadow repository's first snapshot of the whole tree.
    const shadow = join(base, 'shadow.git');
    execFileSync('git', ['init', '-q', '--bare', shadow]);
    const firstMs = timeShadowCommit(shadow, large, 'initial');
    const bytesAfterFirst = duBytes(shadow);
    execFileSync('sync');
    await recordOnce(smallRec, -1);
    await recordOnce(largeRec, -1);
    const smallMs: number[] = [];
    const largeMs: number[] = [];
    const recordingMs: number[] = [];
    const stepMs: number[] = [];
    const durableMs: number[] = [];
    const durableCommitMs: number[] = [];
    let recordBytes = 0;
    // Side by side: ours in the 10-file and the 50k-file workspace alternate (which goes first
    // too), and a durable shadow commit of its own edit comes between them every few samples, so
    // that the same state of the disk (a burst of load, a flush of earlier work) weighs on all three.
    for (let i = 0; i < SAMPLES; i++) {
      const [first, second] = i % 2 === 0 ? [smallRec, largeRec] : [largeRec, smallRec];
      const a = await recordOnce(first, i);
      const b = await recordOnce(second, i);
      const [smallOne, largeOne] = first === smallRec ? [a, b] : [b, a];
      smallMs.push(smallOne.ms);
      largeMs.push(largeOne.ms);
      recordBytes = largeOne.recordBytes;
      recordingMs.push(await recordingOnly(largeRec, i));
      if (i % SHADOW_EVERY === SHADOW_EVERY - 1) {
        const shadowEdit = timeShadowEdit(shadow, large, `shadow durable edit ${i}\n`, true);
        durableMs.push(shadowEdit.edit);
        durableCommitMs.push(shadowEdit.commit);
        // What git left unsynced (reflogs, its edit) is flushed outside the timings: each side pays
        // for its own durability only (ext4 makes an fsync write out other files' dirty data too).
        execFileSync('sync');
      }
    }
    for (let i = 0; i < 3; i++) {
      stepMs.push(timeShadowEdit(shadow, large, `shadow edit ${i}\n`, false).edit);
    }
    await smallRec.writer.close();
    await largeRec.writer.close();
    const oursMs = median(recordingMs);
    const oursEditMs = median(largeMs);
    // Per edit (two a sample in the 50k store, and one warm-up): the new blob(s) it stored plus its patch record.
    const bytesOurs = duBytes(join(base, 'store-large', 'blobs')) / (2 * SAMPLES + 1) + recordBytes;
    const shadowMs = median(durableMs);
    const result = {
      files_small: 10,
      files_large: FILES_LARGE,
      ours_ms_10: Number(median(smallMs).toFixed(3)),
      ours_ms_50k: Number(oursEditMs.toFixed(3)),
      ratio_50k_vs_10: Number((oursEditMs / median(smallMs)).toFixed(3)),
      ours_recording_ms_50k: Number(oursMs.toFixed(3)),
      shadow_git_first_commit_ms: Math.round(firstMs),
      shadow_git_step_ms: Number(shadowMs.toFixed(1)),
      shadow_git_steps: durableMs.length,
      // Whole edits on both sides: the file written and the edit recorded, durably.
      shadow_git_ratio: Number((shadowMs / oursEditMs).toFixed(1)),
      shadow_git_step_nofsync_ms: Number(median(stepMs).toFixed(1)),
      shadow_git_nofsync_ratio: Number((median(stepMs) / oursEditMs).toFixed(1)),
      shadow_git_recording_ratio: Number((median(durableCommitMs) / oursMs).toFixed(1)),
      shadow_git_first_ratio: Number((firstMs / oursEditMs).toFixed(1)),
      bytes_ours: Math.round(bytesOurs),
      bytes_shadow_git: duBytes(shadow),
      bytes_shadow_git_first_snapshot: bytesAfterFirst,
      samples: SAMPLES,
    };
    console.log(JSON.stringify(result));
  } finally {
    await removeWhenGitIsDone(base);
  }
}

void main();
