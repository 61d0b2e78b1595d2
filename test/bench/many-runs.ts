// A store holding many long runs, for bench:review (keep_ms_p95) and bench:window: RUNS runs of
// STEPS light steps each, built once per bench.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { FileStoreOptions } from '../../src/core/store/file/file-store';
import type { NewRecord } from '../../src/core/store/records';
import { NodeStoreFs } from '../../src/host/node/node-store-fs';
import { openFileStore } from '../../src/host/node/store-factory';
import { runInput } from './store-steps';

/** Steps per commit group while building (building is not what is measured). */
const STEPS_PER_GROUP = 100;

/** A node port that counts the reads of journals (whole, or from a snapshot's offset). */
export class CountingFs extends NodeStoreFs {
  journalReads = 0;
  override readFile(path: string): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.journalReads++;
    return super.readFile(path);
  }
  override readFrom(path: string, offset: number): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.journalReads++;
    return super.readFrom(path, offset);
  }
}

export const runIdOf = (i: number) => `run-${String(i).padStart(3, '0')}`;

const hex = (n: number, salt: string) => `${salt}${n.toString(16)}`.padStart(64, '0').slice(-64);

/** A light step (~750 bytes of journal): its checkpoint, the assistant's words, the patch of the file it edited (pending). */
function lightStep(runId: string, n: number): NewRecord[] {
  const checkpoint: NewRecord = {
    type: 'checkpoint',
    checkpointId: `cp-${n}`,
    stepId: n,
    label: 'before_model',
    messageCount: 1,
    patchCount: n - 1,
    status: 'running',
    budget: { turns: n, maxTurns: 100_000, inputTokens: n * 2100, outputTokens: n * 400, tokensUsed: 9000, costUsd: n * 0.012 },
  };
  const words = `step ${n}: edited src/f${n % 50}.ts and ran the tests; the next change follows the same plan as the last.`;
  return [
    checkpoint,
    { type: 'message', index: 1, stepId: n, message: { role: 'assistant', content: [{ type: 'text', text: words }] } },
    {
      type: 'patch',
      patch: {
        patchId: `${runId}-p${n}`,
        runId,
        stepId: n,
        toolCallId: `tu-${n}`,
        path: `src/f${n % 50}.ts`,
        op: 'modify',
        beforeHash: hex(n, 'b'),
        afterHash: hex(n, 'a'),
        added: 3,
        removed: 3,
        binary: false,
        createdAt: n,
        state: 'pending',
      },
    },
  ];
}

/**
 * Builds `runs` runs of `steps` light steps under `root` (the heavy workload of bench:store writes
 * 13 KB a step: 10,000 of them are 130 MB a run); returns the bytes of their journals.
 */
export async function buildRuns(root: string, runs: number, steps: number, options: Partial<FileStoreOptions> = {}): Promise<number> {
  const store = openFileStore(root, { ...options, timers: undefined });
  let journalBytes = 0;
  for (let i = 0; i < runs; i++) {
    const runId = runIdOf(i);
    const writer = await store.createRun({ ...runInput(runId), task: `long run ${i}` });
    await writer.append([{ type: 'message', index: 0, stepId: 0, message: { role: 'user', content: `long run ${i}` } }]);
    let pending: NewRecord[] = [];
    for (let n = 1; n <= steps; n++) {
      pending.push(...lightStep(runId, n));
      if (n % STEPS_PER_GROUP === 0 || n === steps) {
        await writer.append(pending);
        pending = [];
      }
    }
    await writer.close();
    journalBytes += statSync(join(root, 'runs', runId, 'journal.jsonl')).size;
  }
  return journalBytes;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 100) / 100;
}
