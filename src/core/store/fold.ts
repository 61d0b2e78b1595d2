import type { LedgerEntry } from '../ledger/schema';
import type { MessageParam } from '../model/messages';
import type { ReviewDecision } from '../patches/review';
import type { Patch } from '../patches/schema';
import { StoreError, type RunState } from './contract';
import { branchAt, type History } from './history';
import type { Budget, CheckpointRecord, StoredRecord } from './records';
import { listedInstruction } from './listing-facts';
import type { ResumeState } from './resume-state';
import { SLICE } from './slices';
import { forkAt } from './fork-fold';
import { noteFileChanges, restoreChanges, reviewChanges, settleRestore } from './file-changes';
import { foldPlanCall } from './plan';
export { noteFileChanges, restoreChanges, reviewChanges, settleRestore } from './file-changes';

// The reducer: the one fold of records into a run's state. Every reader of a run folds with it:
// the full read of a journal (timeline, restore, verify), the live session of a writer, the
// writer's snapshots and the memory store. foldRecord is the incremental step (state + record ->
// state, in place, for speed); the whole fold of a journal is in history.ts. A `branch` record
// (restore_session) needs the records before it: without them the step throws BranchNeedsRecords.

/** A run's state as records fold into it: ResumeState's fields, the ledger and patches by id. */
export type FoldState = Omit<ResumeState, 'ledger' | 'patches' | 'lastPatchIndex'> & {
  /** By path, the index (patch records before it) of its latest patch; kept by a run that is not a fork (fork-fold.ts). */
  lastPatchIndex?: Map<string, number>;
  /** Latest entry per callId of the active history, in planning order (a Map keeps first insertion order). */
  ledger: Map<string, LedgerEntry>;
  /** Latest patch per patchId, with the state a later patch_state gave it. */
  patches: Map<string, Patch>;
  /** Kept by a full fold only: the active history's checkpoints, and every checkpoint ever written. */
  checkpoints: CheckpointRecord[] | null;
  allCheckpoints: CheckpointRecord[] | null;
  /** Kept by a full fold only: by checkpointId, the history its messageCount counts in (a compaction starts a new one). */
  historyOf: Map<string, readonly MessageParam[]> | null;
  /** Kept by a full fold only: the review decisions, by patchId and hunk index (the latest wins). */
  decisions: Map<string, Map<number, ReviewDecision>> | null;
};

/** A branch record met by a fold that was not given the records before it. */
export class BranchNeedsRecords extends Error {
  constructor() {
    super('a branch record needs the records before it: fold the whole journal');
    this.name = 'BranchNeedsRecords';
  }
}

/** The state right after the run record; `full` keeps every checkpoint (a live fold keeps only the latest). */
export function startFold(record: StoredRecord | undefined, full = false): FoldState {
  if (!record || record.type !== 'run') throw new StoreError('journal does not start with a run record', 'invalid');
  return {
    run: record,
    status: 'running',
    budget: { turns: 0, inputTokens: 0, outputTokens: 0, tokensUsed: 0, costUsd: 0, ...limitsOf(record.settings) },
    messages: [],
    ledger: new Map(),
    patches: new Map(),
    patchCount: 0,
    approvals: [],
    notes: [],
    restores: [],
    checkpointCount: 0,
    lastPatchIndex: new Map(),
    lastRevisionSeq: 0,
    lastSeq: record.seq,
    stepId: 0,
    checkpoints: full ? [] : null,
    allCheckpoints: full ? [] : null,
    historyOf: full ? new Map() : null,
    decisions: full ? new Map() : null,
  };
}

type Limits = Pick<Budget, 'maxTurns' | 'maxTokens' | 'maxCostUsd'>;

/** A run's limits (those set of maxTurns, maxTokens, maxCostUsd): its settings' at first, a fork's its parent's now. */
export function limitsOf({ maxTurns, maxTokens, maxCostUsd }: Limits): Limits {
  return { maxTurns, ...(maxTokens !== undefined ? { maxTokens } : {}), ...(maxCostUsd !== undefined ? { maxCostUsd } : {}) };
}

/** A fold that continues from a snapshot's state. */
export function foldFromResumeState({ lastPatchIndex, ...state }: ResumeState): FoldState {
  return {
    ...state,
    ...(lastPatchIndex ? { lastPatchIndex: new Map(lastPatchIndex.map(({ path, index }) => [path, index])) } : {}),
    messages: [...state.messages],
    ledger: new Map(state.ledger.map((entry) => [entry.callId, entry])),
    patches: new Map(state.patches.map((patch) => [patch.patchId, patch])),
    approvals: [...state.approvals],
    notes: [...state.notes],
    restores: [...state.restores],
    checkpoints: null,
    allCheckpoints: null,
    historyOf: null,
    decisions: null,
  };
}

function foldCheckpoint(state: FoldState, record: CheckpointRecord): void {
  // The request after before_model carries the note naming the files that changed: told once.
  if (record.label === 'before_model') state.fileChanges = undefined;
  state.status = record.status;
  state.statusReason = undefined;
  state.failure = undefined;
  state.budget = record.budget;
  state.checkpointCount += 1;
  state.latestCheckpoint = record;
  if (record.label === 'after_model') state.lastStopReason = record.stopReason;
  state.stepId = Math.max(state.stepId, record.stepId);
  state.checkpoints?.push(record);
  state.allCheckpoints?.push(record);
  state.historyOf?.set(record.checkpointId, state.messages);
}

function foldMessage(state: FoldState, record: Extract<StoredRecord, { type: 'message' }>): void {
  const { messages } = state;
  if (record.index > messages.length) {
    throw new StoreError(`message seq ${record.seq} has index ${record.index} beyond the history (${messages.length})`, 'invalid');
  }
  if (record.index < messages.length) messages.length = record.index;
  messages.push(record.message);
  state.stepId = Math.max(state.stepId, record.stepId);
}

/** The run's records (the run record first, record seq n at index n - 1), for a branch; histories already folded by checkpoint index. */
export interface FoldRecords {
  readonly records: readonly StoredRecord[];
  readonly histories?: Map<number, History>;
}

/**
 * Folds one record into `state` (in place) and returns it. `journal` (holding at least the
 * records before this one) is needed only for a branch record.
 */
export function foldRecord(state: FoldState, record: StoredRecord, journal?: FoldRecords): FoldState {
  switch (record.type) {
    case 'checkpoint':
      foldCheckpoint(state, record);
      break;
    case 'message':
      foldMessage(state, record);
      break;
    case 'compaction':
      // The message records after it (index 0 on) are the whole history from here.
      state.messages = [];
      break;
    case 'ledger':
      state.ledger.set(record.entry.callId, record.entry);
      state.stepId = Math.max(state.stepId, record.entry.stepId);
      foldPlanCall(state, record.entry);
      break;
    case 'patch':
      // A patch id met again keeps its place: what a fork reads of it is no longer the index alone.
      if (state.patches.has(record.patch.patchId)) revised(state, record);
      state.lastPatchIndex?.set(record.patch.path, state.patchCount);
      state.patches.set(record.patch.patchId, record.patch);
      state.patchCount += 1;
      break;
    case 'patch_state': {
      revised(state, record);
      const patch = state.patches.get(record.patchId);
      if (patch) state.patches.set(record.patchId, { ...patch, state: record.state });
      break;
    }
    case 'approval':
      state.approvals.push(record);
      break;
    case 'note':
      state.notes.push(record);
      break;
    case 'restore':
      revised(state, record);
      state.restores.push(record);
      noteFileChanges(state, restoreChanges(record));
      break;
    case 'restore_done':
      settleRestore(state, record);
      break;
    case 'ancestor_changes':
      noteFileChanges(state, record.changes);
      state.ancestorsSeen = record.seen;
      break;
    case 'review':
      revised(state, record);
      if (state.decisions) foldDecision(state.decisions, record);
      if (record.decision === 'undo') noteFileChanges(state, reviewChanges(state, record));
      break;
    case 'budget':
      state.budget = record.budget;
      break;
    case 'status':
      state.status = record.status;
      state.statusReason = record.reason;
      state.failure = record.failure;
      break;
    case 'run_end':
      state.ended = record;
      state.status = record.status;
      state.statusReason = record.summary;
      state.failure = undefined;
      break;
    case 'instruction':
      // A new instruction re-opens a run that had ended (a status record follows in its group).
      state.ended = undefined;
      state.undoing = record.undo;
      if (!record.undo) state.firstInstruction ??= listedInstruction(record.text);
      break;
    case 'branch':
      revised(state, record);
      if (!journal) throw new BranchNeedsRecords();
      branchAt(state, journal, record);
      break;
    case 'fork':
      if (!journal) throw new BranchNeedsRecords();
      forkAt(state, journal, record);
      state.firstInstruction = undefined;
      break;
    default:
      break;
  }
  state.lastSeq = record.seq;
  return state;
}

/** Notes a record that changes what came before it (a patch's state, a restore, a review, a branch): a fork from before it reads the parent whole. */
function revised(state: FoldState, record: StoredRecord): void {
  if (state.lastRevisionSeq !== undefined) state.lastRevisionSeq = record.seq;
}

/** The fold as the RunState readers get. */
export function runStateOf({
  patchCount: _count,
  lastPatchIndex: _index,
  lastRevisionSeq: _revision,
  historyOf,
  decisions,
  ...state
}: FoldState): RunState {
  return {
    ...state,
    decisions: decisions ?? new Map(),
    ledger: [...state.ledger.values()],
    patches: [...state.patches.values()],
    checkpoints: state.checkpoints ?? [],
    allCheckpoints: state.allCheckpoints ?? [],
    ...(historyOf ? { historyOf } : {}),
  };
}

/** One review record's decisions folded in (in place): each hunk's latest decision wins. */
export function foldDecision(decisions: Map<string, Map<number, ReviewDecision>>, record: Extract<StoredRecord, { type: 'review' }>): void {
  for (const ref of record.hunks) {
    const perPatch = decisions.get(ref.patchId) ?? new Map<number, ReviewDecision>();
    perPatch.set(ref.hunk, record.decision);
    decisions.set(ref.patchId, perPatch);
  }
}

/** Folds `records` into `fold` (in place), letting `pause` run between slices; false when a branch needs the records before them. */
export async function foldTail(fold: FoldState, records: readonly StoredRecord[], pause?: () => Promise<void>): Promise<boolean> {
  try {
    for (const [i, record] of records.entries()) {
      foldRecord(fold, record);
      if (i % SLICE === SLICE - 1) await pause?.();
    }
    return true;
  } catch (error) {
    if (error instanceof BranchNeedsRecords) return false;
    throw error;
  }
}
