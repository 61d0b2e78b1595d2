import { z } from 'zod';
import { CHECKPOINT_LABELS, FAILURE_KINDS, LIMIT_KINDS, RUN_STATUSES } from '../../words/statuses';
import { MessageParam } from '../model/messages';
import { LedgerEntry } from '../ledger/schema';
import { HunkRef, ReviewRecord } from '../patches/review';
import { BlobRef, Patch, PatchState } from '../patches/schema';

/** Current format version of every record this build writes. */
export const FORMAT_VERSION = 3;

export const RunStatus = z.enum(RUN_STATUSES);

/** The checksum of a journal line (journal-format.ts), in hex. */
export const LineCrc = z.string().regex(/^[0-9a-f]{8}$/);

/** The save points (src/words/statuses.ts says which is which). */
export const CheckpointLabel = z.enum(CHECKPOINT_LABELS);

export const GitFacts = z.object({
  isRepo: z.boolean(),
  head: z.string().optional(),
  branch: z.string().optional(),
  dirtyPaths: z.array(z.string()),
});

const Limits = z.object({
  maxTurns: z.number().int().positive(),
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
});

export const RunSettings = z.object({
  model: z.string(),
  provider: z.string(),
  ...Limits.shape,
  maxOutputTokensPerCall: z.number().int().positive(),
  /** Context budget: no request may be larger (tokens); unset: the model's context window. */
  maxContextTokens: z.number().int().positive().optional(),
  /** Extended thinking: a token budget per call, or adaptive (the model decides). Unset: off. */
  thinking: z
    .union([z.object({ type: z.literal('enabled'), budgetTokens: z.number().int().min(1024) }), z.object({ type: z.literal('adaptive') })])
    .optional(),
  /** How the run's commands ran: the sandbox in use (`off`: switched off; `unavailable`: none on this machine) and the network. */
  commands: z
    .object({
      sandbox: z.enum(['bwrap', 'sandbox-exec', 'off', 'unavailable']),
      network: z.enum(['allowlist', 'on', 'off']),
      /** With `allowlist`: the hosts allowed at the run's start, each with where it came from ("registry.npmjs.org (~/.npmrc)"). */
      allowlist: z.string().max(4000).optional(),
    })
    .optional(),
});

export const Budget = z.object({
  turns: z.number().int().nonnegative(),
  ...Limits.shape,
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  /** Tokens in the current context window (last request's input + output). */
  tokensUsed: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative(),
});

/** A record of type `type`: its fields, after the version and time every record carries. */
function record<T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.object({ v: z.number().int().positive(), at: z.number(), type: z.literal(type), ...shape });
}

/** One project instruction file the run's system prompt included (core/runtime/project-instructions). */
export const InstructionFileRef = z.object({
  path: z.string(),
  hash: z.string(),
  bytes: z.number().int().nonnegative(),
  /** Longer than the cap: only its first part is in the prompt. */
  truncated: z.boolean(),
});
export type InstructionFileRef = z.infer<typeof InstructionFileRef>;

/** How the run's system prompt was made. */
export const RunPrompt = z.object({
  version: z.number().int().positive(),
  instructionNames: z.array(z.string()),
  instructionFiles: z.array(InstructionFileRef),
  /** Folder-specific AGENTS.md files the prompt names. */
  nestedInstructions: z.array(z.string()),
});
export type RunPrompt = z.infer<typeof RunPrompt>;

/**
 * Where a fork stands on its parent: the parent's journal up to record `seq` (in a file store, the
 * line ending at byte `journalBytes` with checksum `lineCrc`), cut back to the start of `step`.
 * `files`: whether the files were restored to that step (in the parent, undoably) or kept.
 */
export const ForkPoint = z.object({
  runId: z.string().min(1),
  step: z.number().int().positive(),
  /** A point inside the step (the checkpoint before one of its calls); without it, the start of the step. */
  checkpointId: z.string().min(1).optional(),
  seq: z.number().int().positive(),
  journalBytes: z.number().int().positive().optional(),
  lineCrc: LineCrc.optional(),
  files: z.enum(['keep', 'restore']),
});

/** One tool definition as the Messages API's `tools` takes it (core/tools/registry's toolSpec). */
const RecordedToolSpec = z.object({
  name: z.string().min(1),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});

/** The thinking parameter a run's requests send (`none`: no parameter), decided at its start (runtime/request's thinkingParam). */
const ThinkingSent = z.union([
  z.object({ type: z.literal('none') }),
  z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().positive() }),
  z.object({ type: z.literal('adaptive'), display: z.enum(['summarized', 'omitted']).optional() }),
  z.object({ type: z.literal('between_tools') }),
]);

export const RunRecord = record('run', {
  runId: z.string().min(1),
  task: z.string(),
  createdAt: z.number(),
  workspaceFolders: z.array(z.string()),
  git: GitFacts,
  settings: RunSettings,
  /** The system prompt every request of the run sends, byte for byte. */
  system: z.string().optional(),
  /**
   * The tool definitions every request of the run sends, byte for byte, whatever version of the
   * product resumes it (a thinking block is bound to them). Absent (older runs): the registry's.
   */
  tools: z.array(RecordedToolSpec).optional(),
  thinkingSent: ThinkingSent.optional(),
  prompt: RunPrompt.optional(),
  /** Set by the fold of a fork (from its `fork` record), never written in a run record. */
  parent: ForkPoint.optional(),
});

/** The first record of a fork's journal (its seq follows the parent's `seq`): a run whose history is the parent's up to `parent`. */
export const ForkRecord = record('fork', {
  runId: z.string().min(1),
  createdAt: z.number(),
  parent: ForkPoint,
});

export const CheckpointRecord = record('checkpoint', {
  checkpointId: z.string().min(1),
  stepId: z.number().int().nonnegative(),
  label: CheckpointLabel,
  /** Number of messages in the active history at this point (messagesRef). */
  messageCount: z.number().int().nonnegative(),
  /** Number of patches recorded so far (fileSnapshot). */
  patchCount: z.number().int().nonnegative(),
  callId: z.string().optional(),
  status: RunStatus,
  budget: Budget,
  /** after_model: the model's stop_reason, so a resume knows what the answer asked for. */
  stopReason: z.string().optional(),
});

const MessageRecord = record('message', {
  /** Position in the active history. */
  index: z.number().int().nonnegative(),
  stepId: z.number().int().nonnegative(),
  message: MessageParam,
});

const LedgerRecord = record('ledger', { entry: LedgerEntry });

const PatchRecord = record('patch', { patch: Patch });

const PatchStateRecord = record('patch_state', {
  patchId: z.string(),
  state: PatchState,
  reason: z.string().optional(),
});

export const ApprovalRecord = record('approval', {
  /** A call id, or a rule such as `tool:run_command` for allow_for_run. */
  target: z.string(),
  toolName: z.string(),
  decision: z.enum(['allow_once', 'allow_for_run', 'deny']),
});

const BudgetRecord = record('budget', { budget: Budget });

export const NoteRecord = record('note', {
  kind: z.enum(['recovery', 'info', 'warning', 'error']),
  text: z.string(),
});

/** Why a run stopped early, in kinds every host words the same way (core/runtime/failure.ts). */
export const RunFailure = z.object({
  kind: z.enum(FAILURE_KINDS),
  /** The API's HTTP status, when a model call failed with one. */
  status: z.number().int().optional(),
  /** The cause in its own words (the API's message, the limit, the error), secrets scrubbed. */
  message: z.string(),
  /** kind 'limit': which limit and its value (a resume may raise it). */
  limit: z.object({ kind: z.enum(LIMIT_KINDS), max: z.number() }).optional(),
});

const StatusRecord = record('status', {
  status: RunStatus,
  reason: z.string().optional(),
  failure: RunFailure.optional(),
});

/** restore_session: the active history goes back to a checkpoint; the old tail stays in the journal. */
export const BranchRecord = record('branch', {
  checkpointId: z.string(),
  branchId: z.string(),
});

/** What a restore or rollback replaced, so that undo brings back the exact bytes. */
export const RestoreRecord = record('restore', {
  restoreId: z.string(),
  kind: z.enum(['rollback_files', 'restore_session', 'undo']),
  undoes: z.string().optional(),
  files: z.array(
    z.object({
      path: z.string(),
      /** Live content before the restore touched it (blob hash) or `absent`. */
      replacedHash: z.string(),
      replacedBlob: BlobRef.optional(),
      /** Content the restore wrote, or `absent` when it deleted the file. */
      writtenHash: z.string(),
      writtenBlob: BlobRef.optional(),
      /** The executable bit before and after the restore, when it changed it (absent: unchanged or not known). */
      replacedExec: z.boolean().optional(),
      writtenExec: z.boolean().optional(),
    }),
  ),
  patchIds: z.array(z.string()),
  branchId: z.string().optional(),
  /** A restore of files and session together: the file restore that went with this one (its undo undoes both). */
  withRestore: z.string().optional(),
  /** For a restore to a checkpoint: the step whose start (or point) the files went back to. */
  step: z.number().int().nonnegative().optional(),
  /** An inline Undo of these hunks (the file's edit made as a restore): its `review` decision is recorded once the edit is made. */
  hunks: z.array(HunkRef).optional(),
  /** Its file writes are confirmed by a `restore_done` record (write-ahead); until then they may not have happened. Absent: older records, taken as done. */
  confirm: z.literal(true).optional(),
});

/** A file that changed under the model since it last saw it (a restore, an undo, a fork): told on the next request. */
export const FileChange = z.object({ path: z.string(), what: z.string() });
export type FileChange = z.infer<typeof FileChange>;

/**
 * What a person did to the files in a fork's ancestors since it was forked (restores, inline
 * undos): the changes its model must hear of, and how far into each ancestor's journal it looked.
 */
const AncestorChangesRecord = record('ancestor_changes', {
  seen: z.array(z.object({ runId: z.string(), seq: z.number().int().nonnegative() })),
  changes: z.array(FileChange),
});

/** The outcome of a restore's file writes: those written, those left as they were (and why). `cut`: settled after a stop cut the restore. */
export const RestoreDoneRecord = record('restore_done', {
  restoreId: z.string(),
  written: z.array(z.string()),
  left: z.array(z.object({ path: z.string(), reason: z.string() })),
  cut: z.boolean().optional(),
});

export const RunEndRecord = record('run_end', {
  status: z.enum(['completed', 'failed', 'cancelled']),
  summary: z.string().optional(),
});

/** What one model call used and cost (after_model), cache reads and writes apart. */
const UsageRecord = record('usage', {
  stepId: z.number().int().nonnegative(),
  model: z.string(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadInputTokens: z.number().int().nonnegative(),
  cacheCreationInputTokens: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative(),
  /** False when the model has no price in the table (costUsd is then 0). */
  priced: z.boolean(),
  /** A compaction's summary call, not a step of the task. */
  purpose: z.enum(['step', 'summary']).optional(),
});

/** A person raised a paused run's limits (the budget record of the same group holds them). */
const LimitsRecord = record('limits', {
  ...Limits.partial().shape,
  before: Limits,
});

/**
 * The history was compacted: the message records of the same commit group (index 0 on) are the
 * whole active history from here on. The messages before stay in the journal.
 */
const CompactionRecord = record('compaction', {
  stepId: z.number().int().nonnegative(),
  kind: z.enum(['cleared_tool_results', 'summary']),
  /** Estimated request tokens before and after. */
  tokensBefore: z.number().int().nonnegative(),
  tokensAfter: z.number().int().nonnegative(),
  contextBudget: z.number().int().positive(),
  messagesBefore: z.number().int().nonnegative(),
  messagesAfter: z.number().int().nonnegative(),
  /** Calls whose results were cleared (the ledger keeps them). */
  clearedCallIds: z.array(z.string()),
});

/**
 * A person's new instruction to a run that had stopped (completed, failed or paused): the run
 * goes on in the same history. It re-opens a run that had ended (its run_end no longer counts);
 * the user message itself is the message record of the same commit group, followed by an
 * `instruction` save point. `raised`: the limit raised with it because the run had reached it.
 */
export const InstructionRecord = record('instruction', {
  text: z.string().min(1).max(20_000),
  /** The status the run had when the instruction came. */
  after: z.enum(['completed', 'failed', 'paused', 'cancelled']),
  raised: z.object({ kind: z.enum(['turns', 'tokens', 'cost']), from: z.number().positive(), to: z.number().positive() }).optional(),
  /** The instruction asks the agent to undo these calls' external effects: its calls with one are their compensations. */
  undo: z.array(z.string().min(1)).min(1).max(50).optional(),
});

export const StoreRecord = z.discriminatedUnion('type', [
  RunRecord,
  CheckpointRecord,
  MessageRecord,
  LedgerRecord,
  PatchRecord,
  PatchStateRecord,
  ApprovalRecord,
  BudgetRecord,
  NoteRecord,
  StatusRecord,
  BranchRecord,
  RestoreRecord,
  RunEndRecord,
  // New types go last.
  UsageRecord,
  LimitsRecord,
  CompactionRecord,
  ReviewRecord,
  InstructionRecord,
  ForkRecord,
  RestoreDoneRecord,
  AncestorChangesRecord,
]);

export type RunStatus = z.infer<typeof RunStatus>;
export type RunFailure = z.infer<typeof RunFailure>;

export type CheckpointLabel = z.infer<typeof CheckpointLabel>;
export type GitFacts = z.infer<typeof GitFacts>;
export type RunSettings = z.infer<typeof RunSettings>;
export type Budget = z.infer<typeof Budget>;
export type RunRecord = z.infer<typeof RunRecord>;
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;
export type ApprovalRecord = z.infer<typeof ApprovalRecord>;
export type NoteRecord = z.infer<typeof NoteRecord>;
export type BranchRecord = z.infer<typeof BranchRecord>;
export type RestoreRecord = z.infer<typeof RestoreRecord>;
export type RestoreDoneRecord = z.infer<typeof RestoreDoneRecord>;
export type InstructionRecord = z.infer<typeof InstructionRecord>;
export type ForkPoint = z.infer<typeof ForkPoint>;
export type ForkRecord = z.infer<typeof ForkRecord>;
export type StoreRecord = z.infer<typeof StoreRecord>;

/** A record as the writer hands it over: `v` and `at` are filled in by the store. */
export type NewRecord = StoreRecord extends infer R ? (R extends StoreRecord ? Omit<R, 'v' | 'at'> : never) : never;

/** A record as it comes back from the journal, with its sequence number. */
export type StoredRecord = StoreRecord & { readonly seq: number };
