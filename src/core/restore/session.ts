import { hasExternalEffect, type LedgerEntry } from '../ledger/schema';
import type { RunState } from '../store/contract';
import type { BranchRecord, CheckpointRecord, NewRecord, RestoreRecord, StoredRecord } from '../store/records';
import { rollbackFiles, restoreRecord, restoreRecordToNew, RollbackTargetError, type RollbackResult } from './rollback';
import type { RestoreDeps, RollbackOptions } from './types';

export const NOT_REVERSIBLE = 'not reversible';

/** A ledger entry with an external side effect that happened after the restored checkpoint. */
export interface ExternalEffect {
  readonly callId: string;
  readonly toolName: string;
  readonly status: LedgerEntry['status'];
  readonly sideEffects: readonly string[];
  /** How to undo it, or "not reversible". */
  readonly compensation: string;
  readonly reversible: boolean;
  /** File patches of the call: undone by rollback_files, not by compensation. */
  readonly patchIds: readonly string[];
}

export interface SessionRestorePlan {
  readonly checkpoint: CheckpointRecord;
  readonly branch: Omit<BranchRecord, 'v' | 'at'>;
  readonly effects: readonly ExternalEffect[];
}

function compensationOf(entry: LedgerEntry): { compensation: string; reversible: boolean } {
  const text = entry.compensation.trim();
  const reversible = text !== '' && text.toLowerCase() !== NOT_REVERSIBLE;
  return { compensation: reversible ? text : NOT_REVERSIBLE, reversible };
}

function checkpointIndex(records: readonly StoredRecord[], checkpointId: string): number {
  const index = records.findIndex((r) => r.type === 'checkpoint' && r.checkpointId === checkpointId);
  if (index === -1) throw new RollbackTargetError(`no checkpoint ${checkpointId}`);
  return index;
}

/**
 * Active calls whose effect may have happened after the checkpoint: started at some point and
 * not finished (succeeded/failed) at or before it, with declared side effects.
 */
export function effectsAfter(records: readonly StoredRecord[], state: Pick<RunState, 'ledger'>, checkpointId: string): ExternalEffect[] {
  const cut = checkpointIndex(records, checkpointId);
  const finishedBefore = new Set<string>();
  const started = new Set<string>();
  records.forEach((r, i) => {
    if (r.type !== 'ledger') return;
    if (r.entry.status !== 'planned' && r.entry.status !== 'approved') started.add(r.entry.callId);
    if (i <= cut && (r.entry.status === 'succeeded' || r.entry.status === 'failed')) finishedBefore.add(r.entry.callId);
  });
  return state.ledger
    .filter((e) => hasExternalEffect(e) && started.has(e.callId) && !finishedBefore.has(e.callId))
    .map((e) => ({
      callId: e.callId,
      toolName: e.toolName,
      status: e.status,
      sideEffects: e.sideEffects,
      ...compensationOf(e),
      patchIds: e.patchIds ?? [],
    }));
}

/** The branch record and the external effects a session restore to the checkpoint leaves in the world. */
export function planSessionRestore(
  records: readonly StoredRecord[],
  state: Pick<RunState, 'ledger'>,
  checkpointId: string,
  branchId: string,
): SessionRestorePlan {
  const checkpoint = records[checkpointIndex(records, checkpointId)] as CheckpointRecord;
  return { checkpoint, branch: { type: 'branch', checkpointId, branchId }, effects: effectsAfter(records, state, checkpointId) };
}

export interface SessionRestoreResult extends SessionRestorePlan {
  readonly restore: RestoreRecord;
}

/**
 * restore_session: appends the `restore` record (kind restore_session) then the `branch` record;
 * the store's materialise takes the active history back to the checkpoint, the old tail stays
 * in the journal. Files are not touched (see restoreBoth). Effects are listed, never compensated.
 */
export async function restoreSession(
  deps: RestoreDeps,
  records: readonly StoredRecord[],
  state: Pick<RunState, 'ledger'>,
  checkpointId: string,
  withRestore?: string,
): Promise<SessionRestoreResult> {
  const branchId = deps.newId();
  const plan = planSessionRestore(records, state, checkpointId, branchId);
  const restore = restoreRecord(deps, 'restore_session', [], [], { branchId, ...(withRestore === undefined ? {} : { withRestore }) });
  const notes: NewRecord[] = plan.effects.map((e) => ({
    type: 'note',
    kind: 'warning',
    text: `session restored to ${checkpointId}: ${e.toolName} (${e.callId}) already had an external effect; compensation: ${e.compensation}`,
  }));
  await deps.journal.append([restoreRecordToNew(restore), plan.branch, ...notes]);
  return { ...plan, restore };
}

/**
 * Undo of a session restore: a new branch to the newest checkpoint written before the branch
 * the restore made (the head of the history it left), so the abandoned tail becomes active again.
 */
export async function undoSessionRestore(
  deps: RestoreDeps,
  records: readonly StoredRecord[],
  record: RestoreRecord,
): Promise<RestoreRecord> {
  const branchAt = records.findIndex((r) => r.type === 'branch' && r.branchId === record.branchId);
  if (branchAt === -1) throw new RollbackTargetError(`no branch ${record.branchId ?? '(none)'} for restore ${record.restoreId}`);
  const head = records
    .slice(0, branchAt)
    .reverse()
    .find((r): r is StoredRecord & CheckpointRecord => r.type === 'checkpoint');
  if (!head) throw new RollbackTargetError(`no checkpoint before branch ${record.branchId}`);
  const branchId = deps.newId();
  const undo = restoreRecord(deps, 'undo', [], [], { undoes: record.restoreId, branchId });
  await deps.journal.append([restoreRecordToNew(undo), { type: 'branch', checkpointId: head.checkpointId, branchId }]);
  return undo;
}

/** compensate_external_action: the compensation of one ledger entry, recorded as a note; nothing is run. */
export async function compensateExternalAction(
  deps: Pick<RestoreDeps, 'journal'>,
  entry: LedgerEntry,
): Promise<{ compensation: string; reversible: boolean }> {
  const result = compensationOf(entry);
  const text = result.reversible
    ? `compensation for ${entry.toolName} (${entry.callId}): ${result.compensation}`
    : `${entry.toolName} (${entry.callId}) cannot be undone: ${NOT_REVERSIBLE}`;
  await deps.journal.append([{ type: 'note', kind: 'info', text }]);
  return result;
}

/** Restore of "both": the files of the checkpoint (rollback_files), then the session, linked so that one undo undoes both. */
export async function restoreBoth(
  deps: RestoreDeps,
  records: readonly StoredRecord[],
  state: Pick<RunState, 'ledger' | 'patches' | 'allCheckpoints'>,
  checkpointId: string,
  options: Omit<RollbackOptions, 'dryRun'> = {},
): Promise<{ files: RollbackResult; session: SessionRestoreResult }> {
  const files = await rollbackFiles(deps, state, { kind: 'checkpoint', checkpointId }, options);
  const session = await restoreSession(deps, records, state, checkpointId, files.restore?.restoreId);
  return { files, session };
}
