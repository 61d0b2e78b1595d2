import { z } from 'zod';
import { Idempotency, LedgerStatus, ReplayPolicy } from '../core/ledger/schema';
import { CheckpointLabel, RunFailure, RunStatus } from '../core/store/records';

// What the Timeline webview renders. Built by the host from a RunState (see build.ts); kept
// lean because a 10,000-step run crosses the boundary and is parsed on arrival.

/**
 * A patch as the person sees it: its recorded state, or for a pending patch its live state
 * (`unknown` until the host has compared it with the live file).
 */
export const PatchView = z.enum(['applied', 'not_applied', 'conflict', 'missing', 'accepted', 'rolled_back', 'unknown']);

export const PatchRow = z.object({
  patchId: z.string().min(1),
  path: z.string().min(1),
  op: z.enum(['create', 'modify', 'delete']),
  added: z.number().int().nonnegative(),
  removed: z.number().int().nonnegative(),
  binary: z.boolean(),
  state: PatchView,
});

/** A side effect outside the workspace files that a restore cannot take back. */
export const EffectRow = z.object({
  effects: z.array(z.string()),
  /** How to undo it, or "not reversible". */
  compensation: z.string(),
  reversible: z.boolean(),
});

export const CallRow = z.object({
  callId: z.string().min(1),
  toolName: z.string(),
  /** One line summary of the tool input. */
  input: z.string(),
  status: LedgerStatus,
  idempotency: Idempotency,
  policy: ReplayPolicy,
  plannedAt: z.number(),
  durationMs: z.number().nonnegative().optional(),
  isError: z.boolean(),
  /** Error text or why the entry got its status. */
  detail: z.string().optional(),
  /** The checkpoint right before this call was approved or started (restore target), when there is one. */
  checkpointId: z.string().optional(),
  /** That point in words: "after step 3's model reply, before read_file". */
  restorePoint: z.string().optional(),
  effect: EffectRow.optional(),
  /** A compensation: made to undo these earlier calls, in words ("create_issue (toolu_1)"). */
  undoes: z.array(z.string()).optional(),
  /** The later calls made to undo this one's effect, in words. */
  undoneBy: z.array(z.string()).optional(),
  patches: z.array(PatchRow),
  /** What the call did in words: "edit src/greet.js +1 -1", "run `node test.js` -> exit 1". */
  summary: z.string(),
  /** The full input as indented JSON (capped). */
  inputText: z.string().optional(),
  /** The result the model received (capped). */
  result: z.string().optional(),
});

export const StepRow = z.object({
  stepId: z.number().int().nonnegative(),
  /** The first checkpoint of the step: restoring it (a fork) goes back to the start of the step. */
  checkpointId: z.string().min(1),
  /** That point in words: "start of step 3". */
  restorePoint: z.string().optional(),
  /** Label of the step's latest checkpoint (how far the step got). */
  label: CheckpointLabel,
  at: z.number(),
  endAt: z.number(),
  checkpoints: z.number().int().nonnegative(),
  /** The history was compacted at the end of this step (old tool results cleared or summarised). */
  compacted: z.boolean().optional(),
  calls: z.array(CallRow),
  /** What the model said in this step (Markdown, capped) and its thinking, when any. */
  text: z.string().optional(),
  thinking: z.string().optional(),
  /** Tokens and cost of this step alone. */
  tokens: z.number().int().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
  /** A new instruction the person gave the run here, and the limit raised for it, in words. */
  instruction: z.string().optional(),
  raised: z.string().optional(),
});

/** The writer of a run held by another window or process (its lease is live). */
export const RunHolder = z.object({
  pid: z.number().int(),
  hostname: z.string(),
  /** Its last heartbeat. */
  heartbeatAt: z.number(),
});

/** The run's standing instructions: the system prompt it sent (capped) and the project files it included. */
export const RunInstructions = z.object({
  /** The product prompt's version; absent for a prompt given as is. */
  version: z.number().int().positive().optional(),
  /** Estimated size in tokens (bytes / 4). */
  tokens: z.number().int().nonnegative(),
  text: z.string(),
  files: z.array(z.object({ path: z.string(), hash: z.string(), bytes: z.number().int().nonnegative(), truncated: z.boolean() })),
  /** Folder AGENTS.md files the prompt names. */
  nested: z.array(z.string()),
});

export const RunHeader = z.object({
  runId: z.string().min(1),
  /** A fork: the run and step it was forked from. */
  parent: z.object({ runId: z.string().min(1), step: z.number().int().positive() }).optional(),
  task: z.string(),
  status: RunStatus,
  statusReason: z.string().optional(),
  /** Why the run stopped early, when it did (a refused key, a limit): worded by core/runtime/failure-words. */
  failure: RunFailure.optional(),
  createdAt: z.number(),
  /** Time of the run's latest record. */
  updatedAt: z.number(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative(),
  model: z.string(),
  /** Restores that can still be undone. */
  undoableRestores: z.number().int().nonnegative(),
  /** A live writer holds the run right now. */
  active: z.boolean(),
  /** Set when that writer is another window or process: the run can be taken over from it. */
  heldElsewhere: RunHolder.optional(),
  /** The journal is damaged (file, byte, why): the run is shown up to the damage, read-only. */
  damaged: z.string().optional(),
  /** Agent hunks still waiting for Keep or Undo in the editors ("N changes to review"). */
  reviewCount: z.number().int().nonnegative().optional(),
  instructions: RunInstructions.optional(),
  /** Warnings the run recorded (a cost limit its model cannot honour, a deprecated model). */
  warnings: z.array(z.string()).optional(),
});

export const RunView = z.object({ header: RunHeader, steps: z.array(StepRow) });

/** What happens to one file when a checkpoint is restored. */
export const FileRestoreAction = z.enum(['revert', 'conflict', 'already', 'skip']);

export const RestoreMode = z.enum(['files', 'session', 'both']);

export const RestoreFile = z.object({
  path: z.string(),
  action: FileRestoreAction,
  /** Why: which patches, what the user changed, why it is skipped. */
  detail: z.string().optional(),
});

export const RestorePreview = z.object({
  runId: z.string(),
  checkpointId: z.string(),
  mode: RestoreMode,
  /** Conflicts first. */
  files: z.array(RestoreFile),
  /** Messages of the conversation dropped by a session restore. */
  messagesDropped: z.number().int().nonnegative().optional(),
  /** Calls after the checkpoint whose effects outside the files a restore cannot undo. */
  externalEffects: z.array(
    z.object({
      callId: z.string(),
      toolName: z.string(),
      effect: EffectRow,
      /** The call's input and result (capped), and its declared undo call in words, when it has one. */
      input: z.string().optional(),
      result: z.string().optional(),
      undo: z.string().optional(),
    }),
  ),
  /** Handed back with the confirmation so the host knows what the person saw. */
  previewId: z.string(),
});

export type PatchView = z.infer<typeof PatchView>;
export type PatchRow = z.infer<typeof PatchRow>;
export type EffectRow = z.infer<typeof EffectRow>;
export type CallRow = z.infer<typeof CallRow>;
export type StepRow = z.infer<typeof StepRow>;
export type RunHolder = z.infer<typeof RunHolder>;
export type RunHeader = z.infer<typeof RunHeader>;
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
