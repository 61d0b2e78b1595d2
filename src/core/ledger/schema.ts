import { z } from 'zod';
import { IDEMPOTENCY, LEDGER_STATUSES, REPLAY_POLICIES } from '../../words/statuses';
import { BlobRef } from '../patches/schema';
import { Inverse } from './inverse';

export const LedgerStatus = z.enum(LEDGER_STATUSES);
export const Idempotency = z.enum(IDEMPOTENCY);
export const ReplayPolicy = z.enum(REPLAY_POLICIES);

/** A file write a conditional tool is about to make, recorded with `started` (write-ahead). */
export const FileIntent = z.object({
  path: z.string(),
  beforeHash: z.string(),
  afterHash: z.string(),
  /** Blobs of both sides, stored before `started` so a write cut before its patch record can still be recorded. */
  beforeBlob: BlobRef.optional(),
  afterBlob: BlobRef.optional(),
  /** The executable bit of each side when the write changes it (Patch.execBefore/execAfter). */
  execBefore: z.boolean().optional(),
  execAfter: z.boolean().optional(),
});

/** Most problems a call's record (and its result) names; the rest are counted in `more`. */
export const MAX_DIAGNOSTICS = 20;

/** An error or warning the editor reported for a file a call wrote, new since before the write (the Diagnostics port's shape). */
export const DiagnosticItem = z.object({
  path: z.string(),
  line: z.number().int().positive(),
  severity: z.enum(['error', 'warning']),
  message: z.string(),
  code: z.string().optional(),
  source: z.string().optional(),
  /** Found after the write in a file no service had checked before it: it may be older than the write. */
  unchecked: z.literal(true).optional(),
});

/** The new problems after a call's writes, once the language services settled: at most MAX_DIAGNOSTICS, and how many more. */
export const CallDiagnostics = z.object({
  items: z.array(DiagnosticItem).max(MAX_DIAGNOSTICS),
  more: z.number().int().nonnegative(),
  /** Written files no language service looked at (their problems are not known): at most MAX_DIAGNOSTICS. */
  notChecked: z.array(z.string()).max(MAX_DIAGNOSTICS).optional(),
});

/** One tool call's durable record; a new full copy is journaled on every transition. */
export const LedgerEntry = z.object({
  callId: z.string().min(1),
  stepId: z.number().int().nonnegative(),
  toolName: z.string(),
  inputHash: z.string(),
  status: LedgerStatus,
  idempotency: Idempotency,
  replayPolicy: ReplayPolicy,
  sideEffects: z.array(z.string()),
  plannedAt: z.number(),
  startedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  /** Blob hash of the recorded tool_result block (JSON). */
  resultRef: BlobRef.optional(),
  isError: z.boolean().optional(),
  error: z.string().optional(),
  /** How to undo the effect, or "not reversible". */
  compensation: z.string(),
  /** The tool's declared inverse call (an MCP server's config), when it has one. */
  inverse: Inverse.optional(),
  /** This call was made to undo these earlier calls (an instruction asked the agent to undo their effects). */
  compensates: z.array(z.string().min(1)).max(50).optional(),
  /** Why the entry got its current status (deny, reconciliation, person's choice...). */
  reason: z.string().optional(),
  patchIds: z.array(z.string()).optional(),
  /** Write-ahead intents of file tools: what the call will change, known before it starts. */
  intents: z.array(FileIntent).optional(),
  /** The new errors and warnings the editor reported for the files the call wrote (with tool_finished; older records have none). */
  diagnostics: CallDiagnostics.optional(),
  /**
   * Everything the call did is held by its patches (with tool_finished; a command that ran in a
   * copy-on-write view, held to it: run-command.ts commandContained). Absent (older records, and
   * whatever is not known to be so): its declared side effects count.
   */
  contained: z.boolean().optional(),
});

export type LedgerStatus = z.infer<typeof LedgerStatus>;
export type Idempotency = z.infer<typeof Idempotency>;
export type ReplayPolicy = z.infer<typeof ReplayPolicy>;
export type LedgerEntry = z.infer<typeof LedgerEntry>;
export type FileIntent = z.infer<typeof FileIntent>;
export type CallDiagnostics = z.infer<typeof CallDiagnostics>;

/** The side effects of the file tools: they stay inside workspace files, where patches can take them back. */
export const WORKSPACE_WRITE = 'writes a workspace file';
export const WORKSPACE_DELETE = 'deletes a workspace file';
/** Older records name file effects in short forms (fs.write, file:delete...). */
const FILE_EFFECT = /^(fs|file|files|workspace|read)([.:_-]|$)/i;

/** True for a declared side effect that reaches beyond the workspace files. */
export function isExternalEffect(effect: string): boolean {
  const text = effect.trim();
  return text !== '' && text !== 'none' && text !== WORKSPACE_WRITE && text !== WORKSPACE_DELETE && !FILE_EFFECT.test(text);
}

/**
 * True when a call may have changed something outside the workspace files: it reached `started`
 * (a call denied or failed before it started changed nothing), its tool declares an effect beyond
 * workspace file writes (those are patches, rolled back with the files), and its record does not
 * say that all it did is held by its patches (`contained`).
 */
export function hasExternalEffect(entry: Pick<LedgerEntry, 'sideEffects' | 'intents' | 'startedAt' | 'contained'>): boolean {
  return (
    entry.startedAt !== undefined && entry.intents === undefined && entry.contained !== true && entry.sideEffects.some(isExternalEffect)
  );
}
