import type { LedgerEntry } from '../ledger/schema';
import type { Patch } from '../patches/schema';
import { StoreError, type RunState } from './contract';
import { noteFileChanges } from './file-changes';
import { foldRecord, runStateOf, startFold, type FoldRecords, type FoldState } from './fold';
import type { CheckpointRecord, StoredRecord } from './records';
import type { FileChange } from './resume-state';
import { drain, inSlices, SLICE, type Sliced } from './slices';

// The history queries over a run's records, on top of the reducer (fold.ts): what a branch goes
// back to and a fork stands on; and the whole fold of a journal that the full readers use.

export type History = Pick<
  FoldState,
  'messages' | 'ledger' | 'checkpoints' | 'stepId' | 'latestCheckpoint' | 'lastStopReason' | 'ended' | 'patchCount' | 'plan'
>;

export function findCheckpoint(records: readonly StoredRecord[], checkpointId: string, end = records.length): number {
  for (let i = end - 1; i >= 0; i--) {
    const record = records[i]!;
    if (record.type === 'checkpoint' && record.checkpointId === checkpointId) return i;
  }
  throw new StoreError(`checkpoint ${checkpointId} not found`, 'not_found');
}

/** The active history right after a checkpoint before `end`, folded from the records up to it (each checkpoint's once). */
export function historyAt(journal: FoldRecords, end: number, checkpointId: string): History {
  const { records } = journal;
  const histories = journal.histories ?? new Map<number, History>();
  const at = findCheckpoint(records, checkpointId, end);
  let history = histories.get(at);
  if (!history) {
    const state = drain(folding(records, at, histories));
    const checkpoint = records[at] as CheckpointRecord;
    if (state.messages.length > checkpoint.messageCount) state.messages.length = checkpoint.messageCount;
    histories.set(at, (history = state));
  }
  return {
    ...history,
    messages: [...history.messages],
    ledger: new Map(history.ledger),
    checkpoints: history.checkpoints && [...history.checkpoints],
  };
}

/** A `branch` record folded in (in place): the active history goes back to its checkpoint. */
export function branchAt(state: FoldState, journal: FoldRecords, record: Extract<StoredRecord, { type: 'branch' }>): void {
  const end = record.seq - 1;
  branchTo(state, historyAt(journal, end, record.checkpointId), latestEntries(journal.records, end), journal);
}

/** Each call's latest entry, whatever branch it was planned on. */
function latestEntries(records: readonly StoredRecord[], end: number): Map<string, LedgerEntry> {
  const latest = new Map<string, LedgerEntry>();
  for (let i = 0; i < end; i++) {
    const record = records[i]!;
    if (record.type === 'ledger') latest.set(record.entry.callId, record.entry);
  }
  return latest;
}

/** A call whose file writes were all rolled back: its effect is undone, so its later entry is not reused. */
function undone(entry: LedgerEntry | undefined, patches: ReadonlyMap<string, Patch>): boolean {
  const ids = entry?.patchIds ?? [];
  return ids.length > 0 && ids.every((id) => patches.get(id)?.state === 'rolled_back');
}

/**
 * The active history goes back to `history`; the ledger keeps each call's latest entry, except a
 * call whose effect was undone (its files rolled back), which is as it was at the checkpoint. The
 * run is no longer ended (its run_end is past the checkpoint).
 */
export function branchTo(state: FoldState, history: History, latest: ReadonlyMap<string, LedgerEntry>, journal?: FoldRecords): void {
  state.messages = history.messages;
  state.ledger = new Map(
    [...history.ledger.keys()].map((callId) => {
      const newer = latest.get(callId);
      return [callId, newer && !undone(newer, state.patches) ? newer : history.ledger.get(callId)!];
    }),
  );
  if (state.checkpoints) state.checkpoints = [...(history.checkpoints ?? [])];
  state.stepId = history.stepId;
  state.latestCheckpoint = history.latestCheckpoint;
  state.lastStopReason = history.lastStopReason;
  state.ended = history.ended;
  state.plan = history.plan;
  if (journal) noteFileChanges(state, laterPatchChanges(state, history.patchCount, 'after this point'));
}

/**
 * The files the agent wrote after the first `patchCount` patches: what the model of a shorter
 * history does not know. In the order of each file's first later patch; `byLatest`, of its latest
 * (what a fork can know from its parent's snapshot: fork-fold.ts).
 */
export function laterPatchChanges(state: Pick<FoldState, 'patches'>, patchCount: number, when: string, byLatest = false): FileChange[] {
  const byPath = new Map<string, Patch[]>();
  for (const patch of [...state.patches.values()].slice(patchCount)) {
    const earlier = byPath.get(patch.path) ?? [];
    if (byLatest) byPath.delete(patch.path);
    byPath.set(patch.path, [...earlier, patch]);
  }
  return [...byPath].map(([path, patches]) =>
    laterChange(
      path,
      patches.every((p) => p.state === 'rolled_back'),
      when,
    ),
  );
}

/** One file a shorter history does not know: restored (every later patch rolled back) or changed. */
export function laterChange(path: string, restored: boolean, when: string): FileChange {
  return {
    path,
    what: restored
      ? `restored to its content before the agent's later changes (${when})`
      : `changed by the agent ${when} on another branch; those changes are still in the file (read it before editing)`,
  };
}

/**
 * The checkpoint at the start of `step` in an active history: its before_model (every message
 * before the model call is counted there, the previous step's tool results included), else the
 * last checkpoint before the step.
 */
export function stepStartOf(checkpoints: readonly CheckpointRecord[], step: number): CheckpointRecord | undefined {
  const first = checkpoints.findIndex((c) => c.stepId >= step);
  if (first <= 0 || checkpoints[first]!.stepId !== step) return undefined;
  return checkpoints[first]!.label === 'before_model' ? checkpoints[first] : checkpoints[first - 1];
}

/** The full fold of records[0..end] (every checkpoint kept). */
export function foldTo(records: readonly StoredRecord[], end: number, histories?: Map<number, History>): FoldState {
  return drain(folding(records, end, histories));
}

function* folding(records: readonly StoredRecord[], end: number, histories = new Map<number, History>()): Sliced<FoldState> {
  const state = startFold(records[0], true);
  const journal = { records, histories };
  for (let i = 1; i <= end; i++) {
    if (i % SLICE === SLICE - 1) yield;
    foldRecord(state, records[i]!, journal);
  }
  return state;
}

function endOf(records: readonly StoredRecord[], options?: { atCheckpoint?: string }): number {
  return options?.atCheckpoint === undefined ? records.length - 1 : findCheckpoint(records, options.atCheckpoint);
}

/** A run's whole state from its records; with `atCheckpoint`, the state right after that checkpoint record. */
export function foldRecords(records: readonly StoredRecord[], options?: { atCheckpoint?: string }): RunState {
  return runStateOf(drain(folding(records, endOf(records, options))));
}

/** The whole fold of foldRecords, letting `pause` (the event loop) run between slices. */
export function foldInSlices(
  records: readonly StoredRecord[],
  options: { atCheckpoint?: string } | undefined,
  pause?: () => Promise<void>,
): Promise<FoldState> {
  return inSlices(folding(records, endOf(records, options)), pause);
}
