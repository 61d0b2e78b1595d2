import type { MessageParam } from '../model/messages';
import type { Patch } from '../patches/schema';
import { StoreError, type RunState } from './contract';
import { ledgerKeyOf } from './lazy-record';
import type {
  ApprovalRecord,
  Budget,
  CheckpointRecord,
  LedgerRecord,
  MessageRecord,
  NoteRecord,
  RestoreRecord,
  RunEndRecord,
  RunRecord,
  RunStatus,
  StoredRecord,
} from './records';

/**
 * The active history: what a session branch (restore_session) takes back to a checkpoint.
 * Everything else in RunState is global and survives a branch.
 */
interface ActiveHistory {
  /** Message records, not messages: a record read from a journal decodes its message on first read. */
  messages: MessageRecord[];
  /** callIds in planning order. */
  callIds: string[];
  callIdSet: Set<string>;
  checkpoints: CheckpointRecord[];
  stepId: number;
}

interface GlobalState {
  run: RunRecord;
  status: RunStatus;
  statusReason: string | undefined;
  /** Latest ledger record per callId: only these entries are ever decoded (lazy-record.ts). */
  latestEntry: Map<string, LedgerRecord>;
  patches: Map<string, Patch>;
  approvals: ApprovalRecord[];
  budget: Budget;
  allCheckpoints: CheckpointRecord[];
  notes: NoteRecord[];
  restores: RestoreRecord[];
  ended: RunEndRecord | undefined;
  lastSeq: number;
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
  return { messages: [...h.messages], callIds: [...h.callIds], callIdSet: new Set(h.callIds), checkpoints: [...h.checkpoints], stepId: h.stepId };
}

/** Active history after each branch record (by record index), so nested branches are folded once. */
type BranchCache = Map<number, ActiveHistory>;

/** Folds one record into the active history (records outside it are ignored). */
function foldActive(history: ActiveHistory, record: StoredRecord): void {
  switch (record.type) {
    case 'message': {
      if (record.index > history.messages.length) {
        throw new StoreError(`message seq ${record.seq} has index ${record.index} beyond the history (${history.messages.length})`, 'invalid');
      }
      // Truncating only when a message rewrites history: setting an array's length is not free.
      if (record.index < history.messages.length) history.messages.length = record.index;
      history.messages.push(record);
      history.stepId = Math.max(history.stepId, record.stepId);
      return;
    }
    case 'ledger': {
      const { callId, stepId } = ledgerKeyOf(record);
      if (!history.callIdSet.has(callId)) {
        history.callIdSet.add(callId);
        history.callIds.push(callId);
      }
      history.stepId = Math.max(history.stepId, stepId);
      return;
    }
    case 'checkpoint': {
      history.checkpoints.push(record);
      history.stepId = Math.max(history.stepId, record.stepId);
      return;
    }
    default:
      return;
  }
}

/** The active history as it was right after the record at endIndex. */
function activeHistoryUpTo(records: readonly StoredRecord[], endIndex: number, cache: BranchCache): ActiveHistory {
  let history = emptyHistory();
  for (let i = 0; i <= endIndex; i++) {
    const record = records[i]!;
    if (record.type === 'branch') history = branchTo(records, i, record.checkpointId, cache);
    else foldActive(history, record);
  }
  return history;
}

function branchTo(records: readonly StoredRecord[], branchIndex: number, checkpointId: string, cache: BranchCache): ActiveHistory {
  const cached = cache.get(branchIndex);
  if (cached) return cloneHistory(cached);
  const target = findCheckpointIndex(records, checkpointId, branchIndex);
  const history = activeHistoryUpTo(records, target, cache);
  const checkpoint = records[target] as CheckpointRecord;
  if (history.messages.length > checkpoint.messageCount) history.messages.length = checkpoint.messageCount;
  cache.set(branchIndex, cloneHistory(history));
  return history;
}

function findCheckpointIndex(records: readonly StoredRecord[], checkpointId: string, before: number): number {
  for (let i = Math.min(before, records.length) - 1; i >= 0; i--) {
    const record = records[i]!;
    if (record.type === 'checkpoint' && record.checkpointId === checkpointId) return i;
  }
  throw new StoreError(`checkpoint ${checkpointId} not found`, 'not_found');
}

function foldGlobal(state: GlobalState, record: StoredRecord): void {
  state.lastSeq = record.seq;
  switch (record.type) {
    case 'checkpoint':
      state.allCheckpoints.push(record);
      state.budget = record.budget;
      setStatus(state, record.status, undefined);
      return;
    case 'ledger':
      state.latestEntry.set(ledgerKeyOf(record).callId, record);
      return;
    case 'patch':
      state.patches.set(record.patch.patchId, record.patch);
      return;
    case 'patch_state': {
      const patch = state.patches.get(record.patchId);
      if (patch) state.patches.set(record.patchId, { ...patch, state: record.state });
      return;
    }
    case 'approval':
      state.approvals.push(record);
      return;
    case 'budget':
      state.budget = record.budget;
      return;
    case 'note':
      state.notes.push(record);
      return;
    case 'restore':
      state.restores.push(record);
      return;
    case 'status':
      setStatus(state, record.status, record.reason);
      return;
    case 'run_end':
      state.ended = record;
      setStatus(state, record.status, record.summary);
      return;
    default:
      return;
  }
}

function setStatus(state: GlobalState, status: RunStatus, reason: string | undefined): void {
  state.status = status;
  state.statusReason = reason;
}

/**
 * Folds a run's journal into its state. A `branch` record takes the active history (messages,
 * ledger membership, checkpoints, stepId) back to the named checkpoint; everything else is
 * global. With `atCheckpoint`, the state as it was right after that checkpoint record.
 */
export function materialise(records: readonly StoredRecord[], options?: { atCheckpoint?: string }): RunState {
  const first = records[0];
  if (!first || first.type !== 'run') throw new StoreError('journal does not start with a run record', 'invalid');
  const end = options?.atCheckpoint === undefined ? records.length - 1 : findCheckpointIndex(records, options.atCheckpoint, records.length);
  const state: GlobalState = {
    run: first,
    status: 'running',
    statusReason: undefined,
    latestEntry: new Map(),
    patches: new Map(),
    approvals: [],
    budget: initialBudget(first),
    allCheckpoints: [],
    notes: [],
    restores: [],
    ended: undefined,
    lastSeq: first.seq,
  };
  const cache: BranchCache = new Map();
  let history = emptyHistory();
  for (let i = 0; i <= end; i++) {
    const record = records[i]!;
    foldGlobal(state, record);
    if (record.type === 'branch') history = branchTo(records, i, record.checkpointId, cache);
    else foldActive(history, record);
  }
  return toRunState(state, history);
}

/** The run's status as materialise would fold it, from the last record that sets one, without folding the rest. */
export function latestStatus(records: readonly StoredRecord[]): RunStatus {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]!;
    if (record.type === 'checkpoint' || record.type === 'status' || record.type === 'run_end') return record.status;
  }
  return 'running';
}

/** `messages` decoded on first read and kept: a resume of everything else never pays for them. */
function withMessagesOnRead(state: Omit<RunState, 'messages'>, records: readonly MessageRecord[]): RunState {
  let messages: readonly MessageParam[] | undefined;
  return Object.defineProperty(state, 'messages', {
    enumerable: true,
    get: () => (messages ??= records.map((record) => record.message)),
  }) as RunState;
}

function toRunState(state: GlobalState, history: ActiveHistory): RunState {
  const ledger = history.callIds.map((callId) => state.latestEntry.get(callId)!.entry);
  const result: Omit<RunState, 'messages'> = {
    run: state.run,
    status: state.status,
    ledger,
    patches: [...state.patches.values()],
    approvals: state.approvals,
    budget: state.budget,
    checkpoints: history.checkpoints,
    allCheckpoints: state.allCheckpoints,
    notes: state.notes,
    restores: state.restores,
    lastSeq: state.lastSeq,
    stepId: history.stepId,
    ...(state.statusReason !== undefined ? { statusReason: state.statusReason } : {}),
    ...(state.ended ? { ended: state.ended } : {}),
  };
  return withMessagesOnRead(result, history.messages);
}
