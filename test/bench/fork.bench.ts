// bench:fork: a fork of a long run costs O(1) in the parent's length. Builds a parent of
// FORK_STEPS steps (default 10,000) with the workload of bench:store (store-steps.ts), then forks
// it at its middle step and measures the fork itself: time (median of 5), and bytes written (the fork's folder).
// Prints JSON: {"parent_steps","fork_ms","fork_bytes"} (targets: <= 50 ms, <= 64 KiB), plus the
// parent's journal size and the time to read the fork back whole (O(parent), not a target).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { NewRecord } from '../../src/core/store/records';
import { openFileStore } from '../../src/host/node/store-factory';
import { step, type History, type Sink } from './store-steps';

const STEPS = Number(process.env.FORK_STEPS ?? 10_000);
/** Steps per commit group while building the parent (building is not what is measured). */
const STEPS_PER_GROUP = 20;
/** Forks measured (the median is reported). */
const FORKS = 5;

function folderBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'bench-fork-'));
  try {
    const store = openFileStore(root);
    const writer = await store.createRun({
      runId: 'parent',
      task: 'fork bench',
      createdAt: Date.now(),
      workspaceFolders: ['/ws'],
      git: { isRepo: false, dirtyPaths: [] },
      settings: { model: 'm', provider: 'p', maxTurns: 100_000, maxOutputTokensPerCall: 4096 },
    });
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
    const journalBytes = statSync(join(root, 'runs', 'parent', 'journal.jsonl')).size;
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
    const forkBytes = folderBytes(join(root, 'runs', 'fork'));
    const readStarted = performance.now();
    const state = await store.readResumeState('fork');
    const readMs = performance.now() - readStarted;
    if (state.stepId !== at - 1 || state.run.parent?.runId !== 'parent') throw new Error(`the fork reads back wrong: step ${state.stepId}`);
    console.log(
      JSON.stringify({
        parent_steps: STEPS,
        fork_ms: Math.round(forkMs * 100) / 100,
        fork_bytes: forkBytes,
        fork_step: at,
        parent_journal_bytes: journalBytes,
        fork_first_read_ms: Math.round(readMs),
      }),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
