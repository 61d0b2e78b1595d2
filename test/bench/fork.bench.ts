// bench:fork: a fork of a long run costs O(1) in the parent's length, and opens from the parent's
// snapshots, on both devices (the file store; PostgreSQL on a throwaway server, skipped with a
// note when the server binaries are missing). Builds a parent of FORK_STEPS steps (default
// 10,000) with the workload of bench:store (store-steps.ts), then forks it at its middle step and
// measures the fork itself: time (median of 5), and bytes written (the file fork's folder); then
// the fork's first read (its resume state) in that process: fork_first_read_ms (target <= 200).
// Prints JSON: the file store's figures, and PostgreSQL's under `pg`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CheckpointStore } from '../../src/core/store/contract';
import type { NewRecord } from '../../src/core/store/records';
import { PgCheckpointStore } from '../../src/host/node/pg/pg-store';
import { nodeProcessIdentity, openFileStore } from '../../src/host/node/store-factory';
import { postgresBinDir, startPostgres } from '../support/pg-server';
import { runInput, step, type History, type Sink } from './store-steps';

const STEPS = Number(process.env.FORK_STEPS ?? 10_000);
/** Steps per commit group while building the parent (building is not what is measured). */
const STEPS_PER_GROUP = 20;
/** Forks measured (the median is reported). */
const FORKS = 5;

function folderBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

/** The parent: STEPS steps, STEPS_PER_GROUP to a commit group, its checkpoints counting its patches as the runtime does. */
async function buildParent(store: CheckpointStore): Promise<void> {
  const writer = await store.createRun({ ...runInput('parent'), task: 'fork bench' });
  let pending: NewRecord[] = [];
  const sink: Sink = {
    commit: async (records) => {
      pending.push(...records);
      return records.reduce((sum, r) => sum + JSON.stringify(r).length, 0);
    },
    blob: (bytes) => store.putBlob(bytes),
  };
  await writer.append([{ type: 'message', index: 0, stepId: 0, message: { role: 'user', content: 'fork bench' } }]);
  const history: History = { messages: 1, tokens: 0, patches: 0 };
  for (let n = 1; n <= STEPS; n++) {
    await step(sink, n, history);
    if (n % STEPS_PER_GROUP === 0 || n === STEPS) {
      await writer.append(pending);
      pending = [];
    }
  }
  await writer.close();
}

/** Forks the parent at its middle step FORKS times (the median's time), then reads the first fork back. */
async function measure(store: CheckpointStore): Promise<{ fork_ms: number; fork_step: number; fork_first_read_ms: number }> {
  // The schemas' first use in a process and the parent's write-back are not the fork's cost.
  await store.forkRun('parent', { runId: 'warm-up', step: 1, files: 'keep' });
  execFileSync('sync');
  const at = Math.ceil(STEPS / 2);
  const times: number[] = [];
  for (let i = 0; i < FORKS; i++) {
    const started = performance.now();
    await store.forkRun('parent', { runId: i === 0 ? 'fork' : `fork-${i}`, step: at - i, files: 'keep' });
    times.push(performance.now() - started);
  }
  const forkMs = times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  const readStarted = performance.now();
  const state = await store.readResumeState('fork');
  const readMs = performance.now() - readStarted;
  if (state.stepId !== at - 1 || state.run.parent?.runId !== 'parent') throw new Error(`the fork reads back wrong: step ${state.stepId}`);
  return { fork_ms: Math.round(forkMs * 100) / 100, fork_step: at, fork_first_read_ms: Math.round(readMs) };
}

async function onFiles(): Promise<Record<string, number>> {
  const root = mkdtempSync(join(tmpdir(), 'bench-fork-'));
  try {
    const store = openFileStore(root);
    await buildParent(store);
    const journalBytes = statSync(join(root, 'runs', 'parent', 'journal.jsonl')).size;
    const figures = await measure(store);
    return { parent_steps: STEPS, ...figures, fork_bytes: folderBytes(join(root, 'runs', 'fork')), parent_journal_bytes: journalBytes };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function onPostgres(): Promise<Record<string, number> | { skipped: string }> {
  if (postgresBinDir() === null) return { skipped: 'no PostgreSQL server binaries (apt-get install -y postgresql)' };
  const server = await startPostgres();
  const store = new PgCheckpointStore({ url: server.url, schema: await server.newSchema(), process: nodeProcessIdentity });
  try {
    await buildParent(store);
    const { rows } = await store.query<{ bytes: string }>("SELECT bytes FROM ac_runs WHERE run_id = 'parent'");
    return { parent_steps: STEPS, ...(await measure(store)), parent_journal_bytes: Number(rows[0]?.bytes ?? 0) };
  } finally {
    await store.dispose();
    await server.stop?.();
  }
}

async function main(): Promise<void> {
  const files = await onFiles();
  console.log(JSON.stringify({ ...files, pg: await onPostgres() }));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
