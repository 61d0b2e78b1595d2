import type { LedgerEntry, LedgerStatus } from './schema';

/**
 * Legal ledger transitions. `uncertain -> started` is a re-run that reconciliation or a person
 * allowed; `uncertain -> uncertain` only attaches the "status unknown" result reported to the
 * model, so that a later resume reuses it instead of asking again.
 */
const LEGAL: Readonly<Record<LedgerStatus, readonly LedgerStatus[]>> = {
  planned: ['approved', 'started', 'failed'],
  approved: ['started', 'failed'],
  started: ['succeeded', 'failed', 'uncertain'],
  uncertain: ['started', 'succeeded', 'failed', 'uncertain'],
  succeeded: [],
  failed: [],
};

export class IllegalTransitionError extends Error {
  constructor(
    readonly callId: string,
    readonly from: LedgerStatus,
    readonly to: LedgerStatus,
  ) {
    super(`ledger entry ${callId}: illegal transition ${from} -> ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

export function isLegalTransition(from: LedgerStatus, to: LedgerStatus): boolean {
  return LEGAL[from].includes(to);
}

export function isTerminal(status: LedgerStatus): boolean {
  return status === 'succeeded' || status === 'failed';
}

export type EntryChanges = Partial<Omit<LedgerEntry, 'callId' | 'stepId' | 'toolName' | 'inputHash' | 'status' | 'plannedAt'>>;

/** The entry with a new status (and changed fields); throws IllegalTransitionError otherwise. */
export function transition(entry: LedgerEntry, to: LedgerStatus, changes: EntryChanges = {}): LedgerEntry {
  if (!isLegalTransition(entry.status, to)) throw new IllegalTransitionError(entry.callId, entry.status, to);
  if (entry.status === 'uncertain' && to === 'uncertain' && changes.resultRef === undefined) {
    throw new IllegalTransitionError(entry.callId, entry.status, to);
  }
  return { ...entry, ...changes, status: to };
}

/** True when the call has a recorded tool_result that must be reused as is. */
export function hasRecordedResult(entry: LedgerEntry): boolean {
  return entry.resultRef !== undefined && (isTerminal(entry.status) || entry.status === 'uncertain');
}
