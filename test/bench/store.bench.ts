// npm run bench:store: the file store against a rewrite-the-whole-JSON-per-step baseline,
// side by side in one process. Prints one JSON object.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { formatPatch, structuredPatch } from 'diff';
import type { RunWriter } from '../../src/core/store/contract';
import type { StoreFileHandle } from '../../src/core/store/fs-port';
import type { NewRecord, StoredRecord } from '../../src/core/store/records';
import { encodeGroup } from '../../src/core/store/journal-format';
import { stampRecords } from '../../src/core/store/stamp';
import { NodeStoreFs } from '../../src/host/node/node-store-fs';
import { openFileStore } from '../../src/host/node/store-factory';
import {
  bundleResumeChild,
  extensionHostNode,
  layOutJournal,
  RESUME_PROCESSES,
  resumeFigures,
  RUN_ID,
  versionOf,
  type IndexLayout,
} from './store-resume';

const STEPS = 1000;
const RESUME_STEPS = 10_000;

/** The Node port, counting every byte written through it. */
class CountingFs extends NodeStoreFs {
  written = 0;
  constructor(private readonly skipSync = false) {
    super();
  }
  override async write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    this.written += bytes.length;
    await super.write(handle, bytes);
  }
  override async sync(handle: StoreFileHandle): Promise<void> {
    if (!this.skipSync) await super.sync(handle);
  }
  override async syncDir(path: string): Promise<void> {
    if (!this.skipSync) await super.syncDir(path);
  }
}

const words = 'the quick brown fox jumps over the lazy dog while the agent edits src/index.ts and runs the tests; ';
const text = (bytes: number, seed: number) => `${seed} ${words.repeat(Math.ceil(bytes / words.length))}`.slice(0, bytes);
const budget = (turns: number) => ({
  turns,
  maxTurns: 100_000,
  inputTokens: turns * 2100,
  outputTokens: turns * 400,
  tokensUsed: 9000,
  costUsd: turns * 0.012,
});

function checkpointRecord(
  step: number,
  label: 'before_model' | 'after_model' | 'tool_started' | 'file_written' | 'tool_finished',
  messageCount: number,
  callId?: string,
): NewRecord {
  return {
    type: 'checkpoint',
    checkpointId: `cp-${step}-${label}-${callId ?? ''}`,
    stepId: step,
    label,
    messageCount,
    patchCount: step,
    status: 'running',
    budget: budget(step),
    ...(callId ? { callId } : {}),
  };
}

const sourceLines = Array.from({ length: 60 }, (_, i) => `export const value${i} = compute(${i}, 'src/index.ts'); // line ${i}\n`);

/** src/index.ts after edit number `edit` (0: as it started): each edit rewrites three lines. */
function sourceAt(edit: number): string {
  const lines = [...sourceLines];
  for (let k = Math.max(1, edit - 19); k <= edit; k++) {
    const at = (k * 7) % 57;
    for (let i = at; i < at + 3; i++) lines[i] = `export const value${i} = compute(${i} + ${k}, "src/index.ts"); // edited by edit ${k}\n`;
  }
  return lines.join('');
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/** Edits made before step n: one call a step, two every third step. */
const editsBefore = (n: number) => n - 1 + Math.floor((n - 1) / 3);

/**
 * What edit_file records for edit number `edit`: both contents as blobs (the before one already
 * stored by the edit before it), then the patch with its unified diff, as record.ts makes it.
 * Returns the patch record and the new bytes (the after blob; the first edit's before blob too).
 */
async function patchRecord(sink: Sink, step: number, callId: string, edit: number): Promise<{ record: NewRecord; bytes: number }> {
  const before = sourceAt(edit - 1);
  const after = sourceAt(edit);
  const beforeBlob = await sink.blob(utf8(before));
  const afterBlob = await sink.blob(utf8(after));
  const diff = formatPatch(structuredPatch('src/index.ts', 'src/index.ts', before, after, undefined, undefined, { context: 3 }));
  const record: NewRecord = {
    type: 'patch',
    patch: {
      patchId: `p-${callId}`,
      runId: 'big',
      stepId: step,
      toolCallId: callId,
      path: 'src/index.ts',
      op: 'modify',
      beforeHash: beforeBlob,
      afterHash: afterBlob,
      beforeBlob,
      afterBlob,
      diff,
      added: 3,
      removed: 3,
      binary: false,
      createdAt: step * 1000 + 20,
      state: 'pending',
    },
  };
  return { record, bytes: utf8(after).length + (edit === 1 ? utf8(before).length : 0) };
}

function ledgerRecord(step: number, callId: string, status: 'planned' | 'started' | 'succeeded', resultRef?: string): NewRecord {
  return {
    type: 'ledger',
    entry: {
      callId,
      stepId: step,
      toolName: 'edit_file',
      inputHash: 'a'.repeat(64),
      status,
      idempotency: 'conditional',
      replayPolicy: 'auto',
      sideEffects: ['writes src/index.ts'],
      plannedAt: step * 1000,
      ...(status !== 'planned' ? { startedAt: step * 1000 + 5 } : {}),
      ...(status === 'succeeded' ? { finishedAt: step * 1000 + 50, resultRef: resultRef! } : {}),
      compensation: 'roll back the patch',
      intents: [{ path: 'src/index.ts', beforeHash: 'b'.repeat(64), afterHash: 'c'.repeat(64) }],
    },
  };
}

interface Sink {
  /** One commit group, durable when it resolves; returns the new record data in bytes. */
  commit(records: NewRecord[]): Promise<number>;
  blob(bytes: Uint8Array): Promise<string>;
  endStep(): Promise<void>;
}

/**
 * One realistic step: before_model, an assistant message of several KB with one or two edit_file
 * calls, their ledger transitions, each call's patch (file_written), a tool_result message.
 */
async function step(sink: Sink, n: number): Promise<number> {
  const calls = n % 3 === 0 ? [`tu-${n}-a`, `tu-${n}-b`] : [`tu-${n}-a`];
  const base = 2 * (n - 1);
  let bytes = await sink.commit([checkpointRecord(n, 'before_model', base)]);
  const assistant: NewRecord = {
    type: 'message',
    index: base,
    stepId: n,
    message: {
      role: 'assistant',
      content: [
        { type: 'text', text: text(3000, n) },
        ...calls.map((id) => ({ type: 'tool_use', id, name: 'edit_file', input: { path: 'src/index.ts', edits: text(400, n) } })),
      ],
    },
  };
  bytes += await sink.commit([
    assistant,
    ...calls.map((id) => ledgerRecord(n, id, 'planned')),
    checkpointRecord(n, 'after_model', base + 1),
  ]);
  const results: { type: string; tool_use_id: string; content: string }[] = [];
  for (const id of calls) {
    bytes += await sink.commit([ledgerRecord(n, id, 'started'), checkpointRecord(n, 'tool_started', base + 1, id)]);
    const patch = await patchRecord(sink, n, id, editsBefore(n) + calls.indexOf(id) + 1);
    bytes += patch.bytes + (await sink.commit([patch.record, checkpointRecord(n, 'file_written', base + 1, id)]));
    const result = { type: 'tool_result', tool_use_id: id, content: text(2500, n) };
    results.push(result);
    const blobBytes = new TextEncoder().encode(JSON.stringify(result));
    const ref = await sink.blob(blobBytes);
    bytes += blobBytes.length;
    bytes += await sink.commit([ledgerRecord(n, id, 'succeeded', ref), checkpointRecord(n, 'tool_finished', base + 1, id)]);
  }
  bytes += await sink.commit([{ type: 'message', index: base + 1, stepId: n, message: { role: 'user', content: results } }]);
  await sink.endStep();
  return bytes;
}

const recordBytes = (records: readonly StoredRecord[]) => records.reduce((sum, r) => sum + JSON.stringify(r).length + 1, 0);

function storeSink(writer: RunWriter, putBlob: (b: Uint8Array) => Promise<string>): Sink {
  return { commit: async (records) => recordBytes(await writer.append(records)), blob: putBlob, endStep: async () => undefined };
}

/** Baseline: the whole run state as one JSON file, rewritten (temp, fsync, rename, fsync dir) every step. */
function baselineSink(fs: CountingFs, dir: string): Sink & { state: Record<string, unknown[]> } {
  const state: Record<string, unknown[]> = { records: [], blobs: [] };
  let seq = 0;
  return {
    state,
    commit: async (records) => {
      const stamped = records.map((r) => ({ ...r, v: 1, at: Date.now(), seq: ++seq }));
      state.records!.push(...stamped);
      return stamped.reduce((sum, r) => sum + JSON.stringify(r).length + 1, 0);
    },
    blob: async (bytes) => {
      state.blobs!.push(new TextDecoder().decode(bytes));
      return 'f'.repeat(64);
    },
    endStep: async () => {
      const temp = join(dir, 'state.json.tmp');
      const handle = await fs.openAppend(temp);
      await fs.write(handle, new TextEncoder().encode(JSON.stringify(state)));
      await fs.sync(handle);
      await fs.close(handle);
      await fs.rename(temp, join(dir, 'state.json'));
      await fs.syncDir(dir);
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measureRun(sink: Sink): Promise<{ newBytes: number; stepRatio: number; p99: number }> {
  const times: number[] = [];
  let newBytes = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  for (let n = 1; n <= STEPS; n++) {
    const t = performance.now();
    newBytes += await step(sink, n);
    times.push(performance.now() - t);
  }
  loop.disable();
  // "step 10" and "step 1000": medians of the 20-step windows around them.
  const stepRatio = median(times.slice(STEPS - 20)) / median(times.slice(0, 20));
  return { newBytes, stepRatio, p99: loop.percentile(99) / 1e6 };
}

/**
 * A 10,000-step run in the store's own format, built fast: the same records stamped and framed
 * as the writer does, written in one go (the fixture's write speed is not what is measured), then
 * laid out with the resume indexes a writer leaves (store-resume.ts).
 */
export async function buildStoreRun(root: string, steps: number): Promise<Record<IndexLayout, Uint8Array | null>> {
  const fs = new CountingFs(true);
  const store = openFileStore(root, { fs });
  const writer = await store.createRun({
    runId: RUN_ID,
    task: 'resume bench',
    createdAt: Date.now(),
    workspaceFolders: ['/ws'],
    git: { isRepo: false, dirtyPaths: [] },
    settings: { model: 'm', provider: 'p', maxTurns: 100_000, maxOutputTokensPerCall: 4096 },
  });
  await writer.close();
  const groups: Uint8Array[] = [];
  let seq = 1;
  const sink: Sink = {
    commit: async (records) => {
      const stamped = stampRecords(records, seq + 1, Date.now());
      seq += stamped.length;
      groups.push(encodeGroup(stamped));
      return 0;
    },
    blob: (b) => store.putBlob(b),
    endStep: async () => undefined,
  };
  for (let n = 1; n <= steps; n++) await step(sink, n);
  return layOutJournal(root, fs, groups);
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'store-bench-'));
  try {
    const fs = new CountingFs();
    const store = openFileStore(join(root, 'store'), { fs });
    const writer = await store.createRun({
      runId: 'bench',
      task: 'bench',
      createdAt: Date.now(),
      workspaceFolders: ['/ws'],
      git: { isRepo: false, dirtyPaths: [] },
      settings: { model: 'm', provider: 'p', maxTurns: 100_000, maxOutputTokensPerCall: 4096 },
    });
    const before = fs.written;
    const run = await measureRun(storeSink(writer, (b) => store.putBlob(b)));
    await writer.close();
    const storeWritten = fs.written - before;
    progress('store run');

    const baseFs = new CountingFs();
    const baseDir = join(root, 'baseline');
    await baseFs.mkdirp(baseDir);
    const baseSink = baselineSink(baseFs, baseDir);
    const base = await measureRun(baseSink);
    progress('baseline run');

    const indexes = await buildStoreRun(join(root, 'resume'), RESUME_STEPS);
    progress('resume fixture');
    // The baseline run wrote gigabytes: their writeback would run on the same 2 cores as the
    // resumes. Flushed first, outside every timing.
    execFileSync('sync');
    progress('sync');
    // resume_ms: what resumeRun does in a process that just started (a new extension host, the
    // CLI): take the writer's lease, read the journal, materialise the state (ledger, budget,
    // patches decoded and checked; messages and checkpoints proven by checksums, decoded on first
    // read), after a crash left the oldest index it can (store-resume.ts). resume_with_messages_ms
    // adds reading every message. Medians of fresh processes, in the shipped (bundled) form: in
    // this Node (the CLI's) and in the extension host's Node.
    const hostNode = extensionHostNode();
    const runtimes = [process.execPath, hostNode];
    const figures = resumeFigures(runtimes, bundleResumeChild(root), join(root, 'resume'), indexes, RESUME_STEPS);
    const resumesOf = (layout: IndexLayout, node: string) => figures.get(`${layout} ${node}`)!;
    const resumeMsOf = (layout: IndexLayout, node: string) => round(median(resumesOf(layout, node).map((r) => r.resume_ms)));
    const resumes = resumesOf('after_crash', process.execPath);
    const hostResumes = resumesOf('after_crash', hostNode);
    const resumeWithMessagesMs = median(resumes.map((r) => r.resume_with_messages_ms));
    const journalBytes = (await new NodeStoreFs().stat(join(root, 'resume', 'runs', 'big', 'journal.jsonl')))!.size;

    // Baseline resume: the same 10,000-step state as one JSON file.
    const big = baselineSink(new CountingFs(true), baseDir);
    for (let n = 1; n <= RESUME_STEPS; n++) await step({ ...big, endStep: async () => undefined }, n);
    await big.endStep();
    const t = performance.now();
    const parsed = JSON.parse(new TextDecoder().decode(await new NodeStoreFs().readFile(join(baseDir, 'state.json')))) as {
      records: unknown[];
    };
    const baselineResumeMs = performance.now() - t;
    if (parsed.records.length === 0) throw new Error('baseline resume read nothing');

    console.log(
      JSON.stringify({
        steps: STEPS,
        new_bytes: run.newBytes,
        bytes_written: storeWritten,
        bytes_ratio: round(storeWritten / run.newBytes),
        step_ratio: round(run.stepRatio),
        resume_ms: resumeMsOf('after_crash', process.execPath),
        resume_ms_max: round(Math.max(...resumes.map((r) => r.resume_ms))),
        resume_with_messages_ms: round(resumeWithMessagesMs),
        resume_processes: RESUME_PROCESSES,
        resume_node: process.version,
        resume_ms_extension_host: round(median(hostResumes.map((r) => r.resume_ms))),
        resume_ms_extension_host_max: round(Math.max(...hostResumes.map((r) => r.resume_ms))),
        resume_extension_host_node: versionOf(hostNode),
        resume_ms_after_close: resumeMsOf('after_close', process.execPath),
        resume_ms_after_close_extension_host: resumeMsOf('after_close', hostNode),
        resume_ms_without_index: resumeMsOf('without_index', process.execPath),
        resume_ms_without_index_extension_host: resumeMsOf('without_index', hostNode),
        resume_index_bytes: indexes.after_close?.length ?? 0,
        resume_eventloop_max_ms: round(median(resumes.map((r) => r.resume_eventloop_max_ms))),
        resume_eventloop_max_ms_extension_host: round(median(hostResumes.map((r) => r.resume_eventloop_max_ms))),
        resume_steps: RESUME_STEPS,
        resume_journal_mb: round(journalBytes / 2 ** 20),
        eventloop_p99_ms: round(run.p99),
        rss_mb: round(process.memoryUsage().rss / 2 ** 20),
        baseline_bytes_written: baseFs.written,
        baseline_bytes_ratio: round(baseFs.written / base.newBytes),
        baseline_step_ratio: round(base.stepRatio),
        baseline_resume_ms: round(baselineResumeMs),
        baseline_eventloop_p99_ms: round(base.p99),
      }),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const started = performance.now();
const progress = (what: string) => process.stderr.write(`${what} done at ${Math.round(performance.now() - started)} ms\n`);

const round = (x: number) => Math.round(x * 100) / 100;

if (require.main === module) void main();
