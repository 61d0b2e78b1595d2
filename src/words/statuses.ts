// The value lists every layer shares: the run's and the ledger's statuses, the save points and the
// failure kinds. A leaf: no imports, so core's record schemas, the webview's wire schemas and the
// hosts' words are all built from the one list here.

export const RUN_STATUSES = ['running', 'paused', 'completed', 'failed', 'cancelled', 'interrupted'] as const;
export const LEDGER_STATUSES = ['planned', 'approved', 'started', 'succeeded', 'failed', 'uncertain'] as const;
export const IDEMPOTENCY = ['idempotent', 'conditional', 'non_idempotent'] as const;
export const REPLAY_POLICIES = ['auto', 'ask', 'never'] as const;

/** The save points of a step; `compacted` and `instruction` mark a compaction and a person's new instruction. */
export const CHECKPOINT_LABELS = [
  'run_start',
  'before_model',
  'after_model',
  'tool_planned',
  'tool_approved',
  'tool_started',
  'tool_finished',
  'file_written',
  'run_end',
  'compacted',
  'instruction',
] as const;

/** Why a run stopped early, in kinds every host words the same way (failure-words.ts). */
export const FAILURE_KINDS = [
  'auth',
  'network',
  'refused',
  'rate_limit',
  'overloaded',
  'server',
  'invalid_response',
  'limit',
  'approval',
  'storage',
  'interrupted',
  'internal',
] as const;
export const LIMIT_KINDS = ['turns', 'tokens', 'cost'] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];
export type LedgerStatus = (typeof LEDGER_STATUSES)[number];
export type Idempotency = (typeof IDEMPOTENCY)[number];
export type ReplayPolicy = (typeof REPLAY_POLICIES)[number];
export type CheckpointLabel = (typeof CHECKPOINT_LABELS)[number];
export type FailureKind = (typeof FAILURE_KINDS)[number];
export type LimitKind = (typeof LIMIT_KINDS)[number];

/** A run's failure as the words need it (core's record and the wire's row both have this shape). */
export interface RunFailureFacts {
  readonly kind: FailureKind;
  readonly status?: number;
  readonly message: string;
  readonly limit?: { readonly kind: LimitKind; readonly max: number };
}

/** The reason a run records when it paused because the person cancelled it. */
export const CANCELLED_REASON = 'cancelled';

/**
 * Whether a resume can continue a run in this status, with no live writer holding it. A run that
 * ended (completed, failed, cancelled) has a run_end record and nothing to resume.
 */
export function isResumableStatus(status: RunStatus, heldByLiveWriter: boolean): boolean {
  return !heldByLiveWriter && (status === 'paused' || status === 'interrupted' || status === 'running');
}

/** The status of one step of the model's plan (the update_plan tool). */
export const PLAN_STEP_STATUSES = ['pending', 'in_progress', 'done'] as const;
