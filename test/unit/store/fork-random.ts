import type { CheckpointStore, RunWriter } from '../../../src/core/store/contract';
import { foldInSlices } from '../../../src/core/store/history';
import type { NewRecord } from '../../../src/core/store/records';
import { resumeStateOf, type ResumeState } from '../../../src/core/store/resume-state';
import { budget, ledgerEntry, message } from './fixtures';

// Random runs for the fork tests of both stores (fork-from-snapshot.test.ts, pg-fork-from-snapshot.test.ts).

/** A small seeded random source (mulberry32): a failing case can be replayed from its seed. */
export function randomOf(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

export interface Shape {
  /** Rollbacks and reviews in the parent (records that change what came before them). */
  readonly revisions: boolean;
}

/** Writes `steps` random steps to `writer`: answers, calls, patches on a few files, approvals, compactions; returns the patches written. */
export async function randomSteps(writer: RunWriter, random: (n: number) => number, steps: number, shape: Shape, from = 1): Promise<void> {
  let messages = (writer.resumeState.messages ?? []).length;
  let patches = writer.resumeState.patchCount;
  const point = (id: string, stepId: number, label: 'before_model' | 'after_model' | 'tool_finished' | 'compacted'): NewRecord => ({
    type: 'checkpoint',
    checkpointId: id,
    stepId,
    label,
    messageCount: messages,
    patchCount: patches,
    status: 'running',
    budget: budget(stepId),
  });
  const written: string[] = [];
  for (let n = from; n < from + steps; n++) {
    if (n > 1 && random(6) === 0) {
      await writer.append([
        {
          type: 'compaction',
          stepId: n,
          kind: 'summary',
          tokensBefore: 900,
          tokensAfter: 100,
          contextBudget: 1000,
          messagesBefore: messages,
          messagesAfter: 1,
          clearedCallIds: [],
        },
        message(0, n, 'user', `summary ${n}`),
      ]);
      messages = 1;
      await writer.append([point(`c${n}`, n, 'compacted')]);
    }
    await writer.append([point(`b${n}`, n, 'before_model')]);
    const calls = Array.from({ length: random(3) }, (_, i) => `k${n}-${i}`);
    await writer.append([
      message(messages++, n, 'assistant', `answer ${n}`),
      ...calls.map((id) => ledgerEntry(id, n, 'planned')),
      point(`a${n}`, n, 'after_model'),
    ]);
    for (const id of calls) {
      const group: NewRecord[] = [];
      if (random(3) === 0)
        group.push({
          type: 'approval',
          target: random(2) ? id : 'tool:write_file',
          toolName: 'write_file',
          decision: random(2) ? 'allow_once' : 'allow_for_run',
        });
      group.push(ledgerEntry(id, n, 'started'));
      await writer.append(group);
      const patchId = `p-${id}`;
      await writer.append([
        {
          type: 'patch',
          patch: {
            patchId,
            runId: 'p',
            stepId: n,
            toolCallId: id,
            path: `f${random(4)}.txt`,
            op: 'modify',
            beforeHash: 'a'.repeat(64),
            afterHash: 'b'.repeat(64),
            added: 1,
            removed: 1,
            binary: false,
            createdAt: n,
            state: 'pending',
          },
        } as NewRecord,
      ]);
      patches += 1;
      written.push(patchId);
      await writer.append([ledgerEntry(id, n, 'succeeded'), point(`f${n}-${id}`, n, 'tool_finished')]);
    }
    await writer.append([message(messages++, n, 'user', `result ${n}`)]);
    if (shape.revisions && written.length > 0 && random(5) === 0) {
      const patchId = written[random(written.length)]!;
      await writer.append([{ type: 'patch_state', patchId, state: random(2) ? 'rolled_back' : 'accepted' }]);
    }
  }
}

/** The truth: the whole fold of the fork's records (its parent's up to its point first). */
export async function wholeFold(store: CheckpointStore, runId: string): Promise<ResumeState> {
  return resumeStateOf(await foldInSlices(await store.readRecords(runId), undefined));
}
