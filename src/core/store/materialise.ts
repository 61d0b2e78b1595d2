import type { LedgerEntry } from '../ledger/schema';
import type { MessageParam } from '../model/messages';
import type { Patch, PatchState } from '../patches/schema';
import { StoreError, type RunState } from './contract';
import { ArrayLog, type RecordLog } from './record-log';
import { drain, inSlices, SLICE, type Sliced } from './slices';
import type {
  ApprovalRecord,
  Budget,
  CheckpointRecord,
  NoteRecord,
  RestoreRecord,
  RunEndRecord,
  RunRecord,
  RunStatus,
  StoredRecord,
} from './records';

/**
 * The active history: what a session branch (restore_session) takes back to a checkpoint.
 * Everything else in RunState is global and survives a branch. Records are named by their
 * position in the log: a line of a journal is decoded only if the state keeps it.
 */
interface ActiveHistory {
  messages: number[];
  /** callIds in planning order. */
  callIds: string[];
  callIdSet: Set<string>;
  checkpoints: number[];
  stepId: number;
}

interface GlobalState {
  run: RunRecord;
  /** The last record that set the status (checkpoint, status, run_end), or -1. */
  statusAt: number;
  /** The last record that set the budget (checkpoint, budget), or -1. */
  budgetAt: number;
  /** Latest ledger record per callId: only these entries are ever decoded. */
  latestEntry: Map<string, number>;
  /** Latest patch record per patchId, with the state a later patch_state gave it. */
  patches: Map<string, { at: number; state: PatchState | undefined }>;
  approvals: ApprovalRecord[];
  allCheckpoints: number[];
  notes: NoteRecord[];
  restores: RestoreRecord[];
  ended: RunEndRecord | undefined;
}

export function initialBudget(run: RunRecord): Budget {
  const budget: Budget = { turns: 0, maxTurns: run.settings.maxTurns, inputTokens: 0, outputTokens: 0, tokensUsed: 0, costUsd: 0 };
  if (run.settings.maxTokens !== undefined) budget.maxTokens = run.settings.maxTokens;
  if (run.settings.maxCostUsd !== undefined) budget.maxCostUsd = run.settings.maxCostUsd;
  return budget;
}

function emptyHistory(): ActiveHistory {
  return { messages: [], callIds: [], callIdSet: new Set(), checkpoints: [], stepId: 0 };
}

function cloneHistory(h: ActiveHistory): ActiveHistory {
  return {
    messages: [...h.messages],
    callIds: [...h.callIds],
    callIdSet: new Set(h.callIds),
    checkpoints: [...h.checkpoints],
    stepId: h.stepId,
  };
}

/** Active history after each branch record (by record index), so nested branches are folded once. */
type BranchCache = Map<number, ActiveHistory>;

/** Folds record i into the active history (records outside it are ignored). */
function foldActive(log: RecordLog, history: ActiveHistory, i: number): void {
  switch (log.typeAt(i)) {
    case 'message': {
      const index = log.messageIndexAt(i);
      if (index > history.messages.length) {
        throw new StoreError(`message seq ${log.seqAt(i)} has index ${index} beyond the history (${history.messages.length})`, 'invalid');
      }
      // Truncating only when a message rewrites history: setting an array's length is not free.
      if (index < history.messages.length) history.messages.length = index;
      history.messages.push(i);
      history.stepId = Math.max(history.stepId, log.stepIdAt(i));
      return;
    }
    case 'compaction':
      // The message records after it (index 0 on) are the whole history from here.
      history.messages.length = 0;
      return;
    case 'ledger': {
      const callId = log.callIdAt(i);
      if (!history.callIdSet.has(callId)) {
        history.callIdSet.add(callId);
        history.callIds.push(callId);
      }
      history.stepId = Math.max(history.stepId, log.stepIdAt(i));
      return;
    }
    case 'checkpoint': {
      history.checkpoints.push(i);
      history.stepId = Math.max(history.stepId, log.stepIdAt(i));
      return;
    }
    default:
      return;
  }
}

/** The active history as it was right after the record at endIndex. */
function activeHistoryUpTo(log: RecordLog, endIndex: number, cache: BranchCache): ActiveHistory {
  let history = emptyHistory();
  for (let i = 0; i <= endIndex; i++) {
    if (log.typeAt(i) === 'branch') history = branchTo(log, i, branchTarget(log, i), cache);
    else foldActive(log, history, i);
  }
  return history;
}

function branchTarget(log: RecordLog, i: number): string {
  return (log.record(i) as Extract<StoredRecord, { type: 'branch' }>).checkpointId;
}

function branchTo(log: RecordLog, branchIndex: number, checkpointId: string, cache: BranchCache): ActiveHistory {
  const cached = cache.get(branchIndex);
  if (cached) return cloneHistory(cached);
  const target = findCheckpointIndex(log, checkpointId, branchIndex);
  const history = activeHistoryUpTo(log, target, cache);
  const checkpoint = log.record(target) as CheckpointRecord;
  if (history.messages.length > checkpoint.messageCount) history.messages.length = checkpoint.messageCount;
  cache.set(branchIndex, cloneHistory(history));
  return history;
}

function findCheckpointIndex(log: RecordLog, checkpointId: string, before: number): number {
  for (let i = Math.min(before, log.length) - 1; i >= 0; i--) {
    if (log.typeAt(i) === 'checkpoint' && (log.record(i) as CheckpointRecord).checkpointId === checkpointId) return i;
  }
  throw new StoreError(`checkpoint ${checkpointId} not found`, 'not_found');
}

function foldGlobal(log: RecordLog, state: GlobalState, i: number): void {
  switch (log.typeAt(i)) {
    case 'checkpoint':
      state.allCheckpoints.push(i);
      state.budgetAt = i;
      state.statusAt = i;
      return;
    case 'ledger':
      state.latestEntry.set(log.callIdAt(i), i);
      return;
    case 'patch':
      state.patches.set(log.patchIdAt(i), { at: i, state: undefined });
      return;
    case 'patch_state': {
      const record = log.record(i) as Extract<StoredRecord, { type: 'patch_state' }>;
      const patch = state.patches.get(record.patchId);
      if (patch) patch.state = record.state;
      return;
    }
    case 'budget':
      state.budgetAt = i;
      return;
    case 'status':
      state.statusAt = i;
      return;
    case 'run_end':
      state.ended = log.record(i) as RunEndRecord;
      state.statusAt = i;
      return;
    case 'instruction':
      // A new instruction re-opens a run that had ended.
      state.ended = undefined;
      return;
    case 'approval':
    case 'note':
    case 'restore':
      foldKept(log, state, i);
      return;
    default:
      return;
  }
}

/** Records the state keeps whole (few in any run). */
function foldKept(log: RecordLog, state: GlobalState, i: number): void {
  const record = log.record(i);
  if (record.type === 'approval') state.approvals.push(record);
  else if (record.type === 'note') state.notes.push(record);
  else if (record.type === 'restore') state.restores.push(record);
}

/**
 * Folds a run's journal into its state. A `branch` record takes the active history (messages,
 * ledger membership, checkpoints, stepId) back to the named checkpoint; everything else is
 * global. With `atCheckpoint`, the state as it was right after that checkpoint record.
 */
export function materialise(source: readonly StoredRecord[] | RecordLog, options?: { atCheckpoint?: string }): RunState {
  return drain(folding(source, options));
}

/** materialise, letting `pause` (the event loop) run between slices of the fold. */
export function materialiseInSlices(
  source: readonly StoredRecord[] | RecordLog,
  options: { atCheckpoint?: string } | undefined,
  pause?: () => Promise<void>,
): Promise<RunState> {
  return inSlices(folding(source, options), pause);
}

function* folding(source: readonly StoredRecord[] | RecordLog, options?: { atCheckpoint?: string }): Sliced<RunState> {
  const log = Array.isArray(source) ? new ArrayLog(source) : (source as RecordLog);
  const first = log.length > 0 ? log.record(0) : undefined;
  if (!first || first.type !== 'run') throw new StoreError('journal does not start with a run record', 'invalid');
  const end = options?.atCheckpoint === undefined ? log.length - 1 : findCheckpointIndex(log, options.atCheckpoint, log.length);
  const state: GlobalState = {
    run: first,
    statusAt: -1,
    budgetAt: -1,
    latestEntry: new Map(),
    patches: new Map(),
    approvals: [],
    allCheckpoints: [],
    notes: [],
    restores: [],
    ended: undefined,
  };
  const cache: BranchCache = new Map();
  let history = emptyHistory();
  for (let i = 0; i <= end; i++) {
    if (i % SLICE === SLICE - 1) yield;
    foldGlobal(log, state, i);
    if (log.typeAt(i) === 'branch') history = branchTo(log, i, branchTarget(log, i), cache);
    else foldActive(log, history, i);
  }
  const ledger = yield* ledgerOf(log, state, history);
  return toRunState(log, state, history, log.seqAt(end), ledger);
}

/** The latest entry of each call of the active history, in planning order (each decoded now, unless decoded ahead). */
function* ledgerOf(log: RecordLog, state: GlobalState, history: ActiveHistory): Sliced<LedgerEntry[]> {
  const ledger: LedgerEntry[] = [];
  for (const callId of history.callIds) {
    if (ledger.length % (SLICE / 8) === SLICE / 8 - 1) yield;
    ledger.push(log.ledgerEntryAt(state.latestEntry.get(callId)!));
  }
  return ledger;
}

/** The record that last set the status (see foldGlobal), or -1. */
function lastStatusIndex(log: RecordLog): number {
  for (let i = log.length - 1; i >= 0; i--) {
    const type = log.typeAt(i);
    if (type === 'checkpoint' || type === 'status' || type === 'run_end') return i;
  }
  return -1;
}

/** The run's status as materialise would fold it, from the last record that sets one, without folding the rest. */
export function latestStatus(source: readonly StoredRecord[] | RecordLog): RunStatus {
  const log = Array.isArray(source) ? new ArrayLog(source) : (source as RecordLog);
  const at = lastStatusIndex(log);
  return at < 0 ? 'running' : statusOf(log.record(at)).status;
}

function statusOf(record: StoredRecord): { status: RunStatus; reason: string | undefined } {
  if (record.type === 'status') return { status: record.status, reason: record.reason };
  if (record.type === 'run_end') return { status: record.status, reason: record.summary };
  return { status: (record as CheckpointRecord).status, reason: undefined };
}

function budgetOf(log: RecordLog, state: GlobalState): Budget {
  if (state.budgetAt < 0) return initialBudget(state.run);
  return (log.record(state.budgetAt) as Extract<StoredRecord, { type: 'checkpoint' | 'budget' }>).budget;
}

function patchesOf(log: RecordLog, state: GlobalState): Patch[] {
  const patches: Patch[] = [];
  for (const { at, state: patchState } of state.patches.values()) {
    const patch = log.patchAt(at);
    patches.push(patchState === undefined ? patch : { ...patch, state: patchState });
  }
  return patches;
}

/** The stop reason of the latest answer (after_model checkpoint) of the active history. */
function lastStopReason(checkpointAt: (i: number) => CheckpointRecord, checkpoints: readonly number[]): string | undefined {
  for (let k = checkpoints.length - 1; k >= 0; k--) {
    const checkpoint = checkpointAt(checkpoints[k]!);
    if (checkpoint.label === 'after_model') return checkpoint.stopReason;
  }
  return undefined;
}

type LazyFields = Pick<RunState, 'messages' | 'checkpoints' | 'allCheckpoints'>;

/** Each field decoded on first read and kept: a resume never pays for the messages and checkpoints it does not read. */
function withFieldsOnRead(state: Omit<RunState, keyof LazyFields>, fields: { [K in keyof LazyFields]: () => LazyFields[K] }): RunState {
  for (const [name, decode] of Object.entries(fields) as [keyof LazyFields, () => unknown][]) {
    let value: unknown;
    Object.defineProperty(state, name, { enumerable: true, get: () => (value ??= decode()) });
  }
  return state as RunState;
}

function toRunState(log: RecordLog, state: GlobalState, history: ActiveHistory, lastSeq: number, ledger: LedgerEntry[]): RunState {
  const decoded = new Map<number, CheckpointRecord>();
  const checkpointAt = (i: number): CheckpointRecord => {
    let checkpoint = decoded.get(i);
    if (!checkpoint) decoded.set(i, (checkpoint = log.record(i) as CheckpointRecord));
    return checkpoint;
  };
  const status = state.statusAt < 0 ? { status: 'running' as const, reason: undefined } : statusOf(log.record(state.statusAt));
  const latest = history.checkpoints.at(-1);
  const stopReason = lastStopReason(checkpointAt, history.checkpoints);
  const result: Omit<RunState, keyof LazyFields> = {
    run: state.run,
    status: status.status,
    ledger,
    patches: patchesOf(log, state),
    approvals: state.approvals,
    budget: budgetOf(log, state),
    checkpointCount: state.allCheckpoints.length,
    notes: state.notes,
    restores: state.restores,
    lastSeq,
    stepId: history.stepId,
    ...(status.reason !== undefined ? { statusReason: status.reason } : {}),
    ...(latest !== undefined ? { latestCheckpoint: checkpointAt(latest) } : {}),
    ...(stopReason !== undefined ? { lastStopReason: stopReason } : {}),
    ...(state.ended ? { ended: state.ended } : {}),
  };
  return withFieldsOnRead(result, {
    messages: (): readonly MessageParam[] => history.messages.map((i) => log.messageAt(i)),
    checkpoints: () => history.checkpoints.map(checkpointAt),
    allCheckpoints: () => state.allCheckpoints.map(checkpointAt),
  });
}
