import * as z from 'zod/mini';
import {
  CHECKPOINT_LABELS,
  FAILURE_KINDS,
  IDEMPOTENCY,
  LEDGER_STATUSES,
  LIMIT_KINDS,
  PLAN_STEP_STATUSES,
  REPLAY_POLICIES,
  RUN_STATUSES,
} from '../words/statuses';

// What the Timeline webview renders. Built by the host from a RunState
// (src/host/vscode/timeline/view-build.ts); kept lean because a 10,000-step run crosses the boundary
// and is parsed on arrival. Browser code: zod's mini build, no module of src/core; the enums are
// built from the value lists of src/words, as core's record schemas are.

const id = z.string().check(z.minLength(1));
const count = z.int().check(z.nonnegative());

export const RunStatus = z.enum(RUN_STATUSES);
export const LedgerStatus = z.enum(LEDGER_STATUSES);
const Idempotency = z.enum(IDEMPOTENCY);
const ReplayPolicy = z.enum(REPLAY_POLICIES);
const CheckpointLabel = z.enum(CHECKPOINT_LABELS);
const RunFailure = z.object({
  kind: z.enum(FAILURE_KINDS),
  status: z.optional(z.int()),
  message: z.string(),
  limit: z.optional(z.object({ kind: z.enum(LIMIT_KINDS), max: z.number() })),
});

/**
 * A patch as the person sees it: its recorded state, or for a pending patch its live state
 * (`unknown` until the host has compared it with the live file).
 */
export const PatchView = z.enum(['applied', 'not_applied', 'conflict', 'missing', 'accepted', 'rolled_back', 'unknown']);

export const PatchRow = z.object({
  patchId: id,
  path: id,
  op: z.enum(['create', 'modify', 'delete']),
  added: count,
  removed: count,
  binary: z.boolean(),
  /** A patch that changes the executable bit of a file kept: "made executable" or "no longer executable". */
  mode: z.optional(z.string()),
  state: PatchView,
});

/** A side effect outside the workspace files that a restore cannot take back. */
export const EffectRow = z.object({
  effects: z.array(z.string()),
  /** How to undo it, or "not reversible". */
  compensation: z.string(),
  reversible: z.boolean(),
});

/** An error or warning the editor reported for a file the call wrote, new since before the write. */
export const ProblemRow = z.object({
  path: z.string(),
  line: z.int().check(z.positive()),
  severity: z.enum(['error', 'warning']),
  message: z.string(),
  /** Which service and code: "ts 2322". */
  origin: z.optional(z.string()),
  /** Found after the write in a file the editor had not checked before it: it may be older. */
  unchecked: z.optional(z.boolean()),
});

export const CallRow = z.object({
  callId: id,
  toolName: z.string(),
  /** One line summary of the tool input. */
  input: z.string(),
  status: LedgerStatus,
  idempotency: Idempotency,
  policy: ReplayPolicy,
  plannedAt: z.number(),
  durationMs: z.optional(z.number().check(z.nonnegative())),
  isError: z.boolean(),
  /** Error text or why the entry got its status. */
  detail: z.optional(z.string()),
  /** The checkpoint right before this call was approved or started (restore target), when there is one. */
  checkpointId: z.optional(z.string()),
  /** That point in words: "after step 3's model reply, before read_file". */
  restorePoint: z.optional(z.string()),
  effect: z.optional(EffectRow),
  /** A compensation: made to undo these earlier calls, in words ("create_issue (toolu_1)"). */
  undoes: z.optional(z.array(z.string())),
  /** The later calls made to undo this one's effect, in words. */
  /** Answered as not run: the person went on with a new instruction instead (not a failure). */
  notRun: z.optional(z.boolean()),
  /** Hosts the commands' network proxy refused during this call: the row offers to allow them. */
  refusedHosts: z.optional(z.array(z.string())),
  undoneBy: z.optional(z.array(z.string())),
  patches: z.array(PatchRow),
  /** The new problems the editor reported in the files the call wrote (the first 20), and how many more. */
  problems: z.optional(z.array(ProblemRow)),
  moreProblems: z.optional(count),
  /** Files the call wrote that no language service looked at (their problems are not known). */
  notChecked: z.optional(z.array(z.string())),
  /** What the call did in words: "edit src/greet.js +1 -1", "run `node test.js` -> exit 1". */
  summary: z.string(),
  /** The full input as indented JSON (capped). */
  inputText: z.optional(z.string()),
  /** The result the model received (capped). */
  result: z.optional(z.string()),
});

export const StepRow = z.object({
  stepId: count,
  /** The first checkpoint of the step: restoring it (a fork) goes back to the start of the step. */
  checkpointId: id,
  /** That point in words: "start of step 3". */
  restorePoint: z.optional(z.string()),
  /** Label of the step's latest checkpoint (how far the step got). */
  label: CheckpointLabel,
  at: z.number(),
  endAt: z.number(),
  checkpoints: count,
  /** The history was compacted at the end of this step (old tool results cleared or summarised). */
  compacted: z.optional(z.boolean()),
  calls: z.array(CallRow),
  /** What the model said in this step (Markdown, capped) and its thinking, when any. */
  text: z.optional(z.string()),
  thinking: z.optional(z.string()),
  /** Tokens and cost of this step alone. */
  tokens: z.optional(count),
  costUsd: z.optional(z.number().check(z.nonnegative())),
  /** A new instruction the person gave the run here, and the limit raised for it, in words. */
  instruction: z.optional(z.string()),
  raised: z.optional(z.string()),
  /** What the runtime told the model with the instruction (files that changed under it), apart from the person's words. */
  told: z.optional(z.string()),
});

/** The writer of a run held by another window or process (its lease is live). */
export const RunHolder = z.object({
  pid: z.int(),
  hostname: z.string(),
  /** Its last heartbeat. */
  heartbeatAt: z.number(),
});

/** The run's standing instructions: the system prompt it sent (capped) and the project files it included. */
export const RunInstructions = z.object({
  /** The product prompt's version; absent for a prompt given as is. */
  version: z.optional(z.int().check(z.positive())),
  /** Estimated size in tokens (bytes / 4). */
  tokens: count,
  text: z.string(),
  files: z.array(z.object({ path: z.string(), hash: z.string(), bytes: count, truncated: z.boolean() })),
  /** Folder AGENTS.md files the prompt names. */
  nested: z.array(z.string()),
});

/** The model's plan as its latest update_plan call set it (at most 20 steps of one line each: core/store/plan.ts). */
export const PlanView = z
  .array(z.object({ step: z.string().check(z.minLength(1), z.maxLength(200)), status: z.enum(PLAN_STEP_STATUSES) }))
  .check(z.maxLength(20));

export const RunHeader = z.object({
  runId: id,
  /** A fork: the run and step it was forked from. */
  parent: z.optional(z.object({ runId: id, step: z.int().check(z.positive()) })),
  task: z.string(),
  /** The first new instruction since the run began or was forked: a fork is titled by it (words/run-title). */
  instruction: z.optional(z.string()),
  status: RunStatus,
  statusReason: z.optional(z.string()),
  /** Why the run stopped early, when it did (a refused key, a limit): worded by failure-words.ts. */
  failure: z.optional(RunFailure),
  createdAt: z.number(),
  /** Time of the run's latest record. */
  updatedAt: z.number(),
  inputTokens: count,
  outputTokens: count,
  costUsd: z.number().check(z.nonnegative()),
  model: z.string(),
  /** Restores that can still be undone. */
  undoableRestores: count,
  /** A live writer holds the run right now. */
  active: z.boolean(),
  /** Set when that writer is another window or process: the run can be taken over from it. */
  heldElsewhere: z.optional(RunHolder),
  /** The journal is damaged (file, byte, why): the run is shown up to the damage, read-only. */
  damaged: z.optional(z.string()),
  /** Agent hunks still waiting for Keep or Undo in the editors ("N changes to review"). */
  reviewCount: z.optional(count),
  instructions: z.optional(RunInstructions),
  /** Warnings the run recorded (a cost limit its model cannot honour, a deprecated model). */
  warnings: z.optional(z.array(z.string())),
  /** How the run's commands reached the network: "allowlist: registry.npmjs.org (~/.npmrc), …", "on (unrestricted)", "off". */
  network: z.optional(z.string()),
  /** The model's plan (update_plan), shown pinned at the top of the run's conversation; absent or empty: none. */
  plan: z.optional(PlanView),
});

export const RunView = z.object({ header: RunHeader, steps: z.array(StepRow) });

/** What happens to one file when a checkpoint is restored. */
export const FileRestoreAction = z.enum(['revert', 'conflict', 'already', 'skip']);

export const RestoreMode = z.enum(['files', 'session', 'both']);

export const RestoreFile = z.object({
  path: z.string(),
  action: FileRestoreAction,
  /** Why: which patches, what the user changed, why it is skipped. */
  detail: z.optional(z.string()),
});

export const RestorePreview = z.object({
  runId: z.string(),
  checkpointId: z.string(),
  mode: RestoreMode,
  /** Conflicts first. */
  files: z.array(RestoreFile),
  /** Messages of the conversation dropped by a session restore. */
  messagesDropped: z.optional(count),
  /** Calls after the checkpoint whose effects outside the files a restore cannot undo. */
  externalEffects: z.array(
    z.object({
      callId: z.string(),
      toolName: z.string(),
      effect: EffectRow,
      /** The call in words: "run `npm publish` -> exit 0", "github__create_issue {…}". */
      label: z.string(),
      /** The call's input and result (capped), and its declared undo call in words, when it has one. */
      input: z.optional(z.string()),
      result: z.optional(z.string()),
      undo: z.optional(z.string()),
      /** Calls that undid it already ("run_command (t3)"): it is not offered again. */
      undoneBy: z.optional(z.array(z.string())),
      /** The call is itself an undo of these: undoing it would redo them, so it is not offered. */
      undoes: z.optional(z.array(z.string())),
    }),
  ),
  /** Handed back with the confirmation so the host knows what the person saw. */
  previewId: z.string(),
});

export type PatchView = z.infer<typeof PatchView>;
export type PatchRow = z.infer<typeof PatchRow>;
export type EffectRow = z.infer<typeof EffectRow>;
export type ProblemRow = z.infer<typeof ProblemRow>;
export type CallRow = z.infer<typeof CallRow>;
export type StepRow = z.infer<typeof StepRow>;
export type RunHolder = z.infer<typeof RunHolder>;
export type RunHeader = z.infer<typeof RunHeader>;
export type PlanView = z.infer<typeof PlanView>;
export type RunView = z.infer<typeof RunView>;
export type RunInstructions = z.infer<typeof RunInstructions>;
export type FileRestoreAction = z.infer<typeof FileRestoreAction>;
export type RestoreMode = z.infer<typeof RestoreMode>;
export type RestoreFile = z.infer<typeof RestoreFile>;
export type RestorePreview = z.infer<typeof RestorePreview>;

const RESTORE_ORDER: Record<FileRestoreAction, number> = { conflict: 0, revert: 1, already: 2, skip: 3 };

/** Conflicts first, then what will change, then what will not; by path within each group. */
export function sortRestoreFiles(files: readonly RestoreFile[]): RestoreFile[] {
  return [...files].sort((a, b) => RESTORE_ORDER[a.action] - RESTORE_ORDER[b.action] || a.path.localeCompare(b.path));
}

export type RunStatus = z.infer<typeof RunStatus>;
export type LedgerStatus = z.infer<typeof LedgerStatus>;
export type RunFailure = z.infer<typeof RunFailure>;
