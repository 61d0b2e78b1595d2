import { strict as assert } from 'node:assert';
import type { CheckpointStore, RunWriter } from '../../../src/core/store/contract';
import type { NewRecord, StoredRecord } from '../../../src/core/store/records';
import { harness, recoveryNoteOf, SETTINGS, type Harness } from './harness';

export class SimulatedCrash extends Error {
  constructor() {
    super('simulated crash');
    this.name = 'SimulatedCrash';
  }
}

/**
 * Wraps a store so that the `crashAtGroup`-th commit group (1-based, over the whole process)
 * and every later one fail without reaching the store: the journal ends exactly where a crash
 * at that save point would leave it. `when` can pick the group by its records instead.
 */
export function crashingStore(
  inner: CheckpointStore,
  when: (records: readonly NewRecord[], group: number) => boolean,
): CheckpointStore & { crashed: () => boolean } {
  let group = 0;
  let crashed = false;
  const wrap = (writer: RunWriter): RunWriter => ({
    runId: writer.runId,
    holderId: writer.holderId,
    resumeState: writer.resumeState,
    async append(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
      group += 1;
      if (crashed || when(records, group)) {
        crashed = true;
        throw new SimulatedCrash();
      }
      return writer.append(records);
    },
    renewLease: () => writer.renewLease(),
    close: () => writer.close(),
  });
  return {
    crashed: () => crashed,
    createRun: async (run) => wrap(await inner.createRun(run)),
    openWriter: async (runId) => wrap(await inner.openWriter(runId)),
    readRun: (runId, options) => inner.readRun(runId, options),
    readResumeState: (runId) => inner.readResumeState(runId),
    readRecords: (runId) => inner.readRecords(runId),
    forkRun: (parentId, fork) => inner.forkRun(parentId, fork),
    listRuns: () => inner.listRuns(),
    putBlob: (bytes) => inner.putBlob(bytes),
    getBlob: (hash) => inner.getBlob(hash),
    verify: (runId) => inner.verify(runId),
    collectGarbage: (policy) => inner.collectGarbage(policy),
  };
}

/** Crash when a group holds a checkpoint with this label (and call id). */
export function atSavePoint(label: string, callId?: string, occurrence = 1): (records: readonly NewRecord[]) => boolean {
  let seen = 0;
  return (records) => {
    const hit = records.some((r) => r.type === 'checkpoint' && r.label === label && (callId === undefined || r.callId === callId));
    if (hit) seen += 1;
    return hit && seen === occurrence;
  };
}

/** Crash at the group that appends the user message with tool results (after every call finished). */
export function atToolResultsMessage(occurrence = 1): (records: readonly NewRecord[]) => boolean {
  let seen = 0;
  return (records) => {
    const hit = records.some(
      (r) =>
        r.type === 'message' &&
        r.message.role === 'user' &&
        Array.isArray(r.message.content) &&
        r.message.content.some((b) => b.type === 'tool_result'),
    );
    if (hit) seen += 1;
    return hit && seen === occurrence;
  };
}

/**
 * Starts a run over a store that crashes at `crashAt`, then resumes it with the healthy store.
 * `track` receives the harness at once, so the caller's afterEach closes it whatever happens.
 */
export async function crashThenResume(
  track: (h: Harness) => void,
  crashAt: (records: never[]) => boolean,
  setup: Parameters<typeof harness>[0],
  between?: (h: Harness) => void,
  overrides = {},
) {
  const h = await harness(setup);
  track(h);
  const crashing = crashingStore(h.store, crashAt as never);
  const first = await h.runtime({ store: crashing, ...overrides }).start({ task: 'task', settings: SETTINGS });
  assert.equal(first.status, 'paused');
  assert.ok(crashing.crashed(), 'the crash point was reached');
  between?.(h);
  const requestsBefore = h.fake.requests.length;
  const second = await h.runtime(overrides).resume(first.runId);
  return { runId: first.runId, outcome: second, requestsBefore };
}

/** The recovery note the `n`-th request carried in its last user message (asserted present). */
export function noteOf(h: Harness, n: number): string {
  const note = recoveryNoteOf(h.fake, n);
  assert.ok(note, 'the last user message carries the recovery note');
  return note;
}
