import { StoreError } from './contract';
import { foldTail, limitsOf, noteFileChanges, restoreChanges, reviewChanges, type FoldRecords, type FoldState } from './fold';
import { branchTo, findCheckpoint, foldTo, historyAt, laterChange, laterPatchChanges, stepStartOf, type History } from './history';
import type { CheckpointRecord, StoredRecord } from './records';
import { OPEN, type FileChange } from './resume-state';

type ForkRecord = Extract<StoredRecord, { type: 'fork' }>;
type Checkpoint = Extract<StoredRecord, { type: 'checkpoint' }>;

// A fork's `fork` record folded into its state, two ways that give the same state. The whole way
// (forkAt, in the one fold) has the parent's records up to the point the fork stands on. The
// short way (forkFromParts) has two states of the parent read from its snapshots: one before the
// fork's step with the records after it up to that step, and one at the point the fork stands on.
// What the fork needs of the records between (the files the agent changed later, the parent's
// limits and rules now) the second state holds; when something between changed what came before
// it (a patch's state, a restore, a review, a branch), the short way gives up (null) and the
// caller reads the parent whole.

/** A fork of `record.parent`: the parent's history at the fork's point, under the fork's own run id (the whole way). */
export function forkAt(state: FoldState, journal: FoldRecords, record: ForkRecord): void {
  const { parent } = record;
  const end = record.seq - 1;
  if (journal.records[end - 1]?.seq !== parent.seq)
    throw new StoreError(`fork ${record.runId} stands on record ${parent.seq} of run ${parent.runId}, which is not there`, 'invalid');
  const target =
    parent.checkpointId === undefined
      ? stepStartOf(state.checkpoints ?? foldTo(journal.records, end - 1, journal.histories).checkpoints ?? [], parent.step)
      : (journal.records[findCheckpoint(journal.records, parent.checkpointId, end)] as CheckpointRecord);
  if (!target) throw new StoreError(`run ${parent.runId} has no step ${parent.step} to fork from`, 'invalid');
  const history = historyAt(journal, end, target.checkpointId);
  const changes = personChangesAfter(state, journal.records, findCheckpoint(journal.records, target.checkpointId, end), end);
  const later = laterPatchChanges(state, target.patchCount, whenOf(record), true);
  const previous = history.checkpoints?.at(-2);
  becomeFork(state, record, { history, target, previous }, [changes, later]);
}

/** The parent's history at the fork's point: the checkpoint there, the one before it (if any), the state right after it. */
interface ForkPoint {
  readonly history: History;
  readonly target: CheckpointRecord;
  readonly previous: CheckpointRecord | undefined;
}

/** Turns the parent's state at the record the fork stands on into the fork's (in place). */
function becomeFork(state: FoldState, record: ForkRecord, point: ForkPoint, [changes, later]: FileChange[][]): void {
  const { parent } = record;
  const { target, previous } = point;
  branchTo(state, point.history, new Map());
  // A fork at the start of a step is before its model call: the step's before_model is not the fork's.
  let budget = target.budget;
  if (target.label === 'before_model') {
    if (previous) {
      state.checkpoints?.pop();
      state.latestCheckpoint = previous;
      budget = previous.budget;
    }
    state.stepId = Math.max(0, target.stepId - 1);
  }
  state.fileChanges = undefined;
  noteFileChanges(state, changes!);
  const restored = (change: FileChange) =>
    parent.files === 'restore' && change.what.startsWith('restored')
      ? { ...change, what: `restored to the start of step ${parent.step}` }
      : change;
  noteFileChanges(state, later!.map(restored));
  state.patches = new Map([...state.patches].slice(0, target.patchCount));
  state.run = { ...state.run, runId: record.runId, createdAt: record.createdAt, parent };
  // A fork keeps the limits the parent has now (raised ones included), with the counters of its point.
  state.budget = { ...budget, ...limitsOf(state.budget) };
  state.status = 'paused';
  state.statusReason = `fork of run ${parent.runId} at the start of step ${parent.step}`;
  state.ended = undefined;
  state.restores = [];
  state.notes = [];
  state.ancestorsSeen = undefined;
  // What a fork of this fork would read of it: not kept (its forks are read the whole way).
  state.lastPatchIndex = undefined;
  state.lastRevisionSeq = undefined;
  if (state.allCheckpoints) state.allCheckpoints = [...(state.checkpoints ?? [])];
}

const whenOf = ({ parent }: ForkRecord) =>
  parent.checkpointId === undefined ? `after step ${parent.step - 1}` : `after this point of step ${parent.step}`;

/** What a person did to the files in the parent after the fork's point (restores, inline undos): the fork's model saw them before. */
function personChangesAfter(state: FoldState, records: readonly StoredRecord[], from: number, end: number): FileChange[] {
  const changes: FileChange[] = [];
  for (let i = from + 1; i < end; i++) {
    const record = records[i]!;
    if (record.type === 'restore') changes.push(...restoreChanges(record));
    else if (record.type === 'review' && record.decision === 'undo') changes.push(...reviewChanges(state, record));
  }
  return changes;
}

/** Two states of a fork's parent, each read from one of its snapshots and the journal after it (see forkFromParts). */
export interface ParentParts {
  /** The parent's state at a snapshot from before the fork's step (its stepId lower than the step before it); taken over. */
  readonly before: FoldState;
  /** The parent's records after `before`, at least up to its first checkpoint past the fork's point. */
  readonly after: readonly StoredRecord[];
  /** The parent's state at the record the fork stands on (parent.seq); taken over. */
  readonly end: FoldState;
}

/** The fork's state right after its `fork` record, from two states of its parent (the short way); null when only the whole way can say. */
export async function forkFromParts(record: ForkRecord, parts: ParentParts): Promise<FoldState | null> {
  const { end } = parts;
  const found = locate(record, parts);
  if (!found || end.lastRevisionSeq === undefined || end.lastPatchIndex === undefined || end.run.parent) return null;
  const { index, previous } = found;
  const target = parts.after[index] as Checkpoint;
  // Something after the fork's point changed what came before it: the whole way says what.
  if (end.lastRevisionSeq > target.seq || end.lastSeq !== record.parent.seq) return null;
  const history = parts.before;
  if (!(await foldTail(history, parts.after.slice(0, index + 1))) || history.patchCount !== target.patchCount) return null;
  if (history.messages.length > target.messageCount) history.messages.length = target.messageCount;
  const later = laterFiles(end, target.patchCount, whenOf(record));
  const approvals = approvalsOf(history, end);
  if (!later || !approvals) return null;
  end.patches = history.patches;
  end.approvals = approvals;
  becomeFork(end, record, { history, target, previous }, [[], later]);
  end.lastSeq = record.seq;
  return end;
}

/** The fork's point among `after`: its checkpoint's index and the checkpoint before it (as stepStartOf finds them). */
function locate(fork: ForkRecord, { before, after }: ParentParts): { index: number; previous?: CheckpointRecord } | null {
  const { parent } = fork;
  let previous = before.latestCheckpoint;
  let beforeLast: CheckpointRecord | undefined;
  let last = -1;
  for (const [i, record] of after.entries()) {
    if (record.type !== 'checkpoint') continue;
    if (pastPoint(fork, record)) {
      if (parent.checkpointId !== undefined) return { index: i, ...(previous ? { previous } : {}) };
      if (record.stepId !== parent.step || !previous) return null;
      if (record.label === 'before_model') return { index: i, previous };
      return last === -1 ? null : { index: last, ...(beforeLast ? { previous: beforeLast } : {}) };
    }
    beforeLast = previous;
    previous = record;
    last = i;
  }
  return null;
}

/** A checkpoint at or past the fork's point. */
export function pastPoint({ parent }: Pick<ForkRecord, 'parent'>, record: StoredRecord): boolean {
  if (record.type !== 'checkpoint') return false;
  return parent.checkpointId !== undefined ? record.checkpointId === parent.checkpointId : record.stepId >= parent.step;
}

/** The files changed after the first `patchCount` patches, from the parent's latest patch of each file; null when one was rolled back. */
function laterFiles(end: FoldState, patchCount: number, when: string): FileChange[] | null {
  const latest = new Map([...end.patches.values()].map((patch) => [patch.path, patch]));
  const paths = [...end.lastPatchIndex!].filter(([, index]) => index >= patchCount).sort((a, b) => a[1] - b[1]);
  if (paths.some(([path]) => latest.get(path)?.state !== 'pending' && latest.get(path)?.state !== 'accepted')) return null;
  return paths.map(([path]) => laterChange(path, false, when));
}

/**
 * The approvals of the fork: those up to its point, then the parent's rules for the run made
 * after it. null when a call open at the point may have been decided after it (the parent's
 * state does not say).
 */
function approvalsOf(history: FoldState, end: FoldState): FoldState['approvals'] | null {
  const count = (state: FoldState, target: string) => state.approvals.filter((a) => a.target === target).length;
  for (const entry of history.ledger.values())
    if (OPEN.has(entry.status) && (!end.ledger.has(entry.callId) || count(end, entry.callId) !== count(history, entry.callId))) return null;
  const rules = (state: FoldState) => state.approvals.filter((a) => a.decision === 'allow_for_run');
  return [...history.approvals, ...rules(end).slice(rules(history).length)];
}
