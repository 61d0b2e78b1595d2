import { z } from 'zod';
import type { Clock, Log, Workspace } from '../ports';
import type { BlobStore } from '../patches/record';
import type { RunWriter } from '../store/contract';

/** What a rollback (or undo) does to one patch, one hunk, one file. */
export const RollbackStatus = z.enum(['revert', 'conflict', 'already', 'skip']);
export type RollbackStatus = z.infer<typeof RollbackStatus>;

export const RollbackTarget = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('patch'), patchId: z.string() }),
  z.object({ kind: z.literal('hunk'), patchId: z.string(), hunkIndex: z.number().int().nonnegative() }),
  /** Every patch recorded after the checkpoint. */
  z.object({ kind: z.literal('checkpoint'), checkpointId: z.string() }),
  z.object({ kind: z.literal('run') }),
]);
export type RollbackTarget = z.infer<typeof RollbackTarget>;

export const PatchRollbackPlan = z.object({
  patchId: z.string(),
  status: RollbackStatus,
  reason: z.string().optional(),
  /** Per hunk of the patch's diff, in diff order. */
  hunks: z.array(RollbackStatus),
});
export type PatchRollbackPlan = z.infer<typeof PatchRollbackPlan>;

export const FileRollbackPlan = z.object({
  path: z.string(),
  /** revert: the file will be written; conflict: left alone; already: nothing to do; skip: not asked for. */
  status: RollbackStatus,
  reason: z.string().optional(),
  /** Hash of the live content the plan was made against (`absent` when missing). */
  liveHash: z.string(),
  /** Hash of the content the rollback would leave (`absent` = deleted). */
  resultHash: z.string(),
  /** The executable bit live and after, when a patch of the file holds one and the host has modes. */
  liveExec: z.boolean().optional(),
  resultExec: z.boolean().optional(),
  /** Newest first, the order they are undone in. */
  patches: z.array(PatchRollbackPlan),
});
export type FileRollbackPlan = z.infer<typeof FileRollbackPlan>;

export const RollbackPlan = z.object({
  target: RollbackTarget,
  force: z.boolean(),
  files: z.array(FileRollbackPlan),
});
export type RollbackPlan = z.infer<typeof RollbackPlan>;

export interface RestoreDeps {
  readonly workspace: Workspace;
  readonly blobs: BlobStore;
  /** The run's writer: the restore record is appended (durably) before any file is touched. */
  readonly journal: Pick<RunWriter, 'append'>;
  readonly clock: Clock;
  readonly log: Log;
  readonly newId: () => string;
}

export interface RollbackOptions {
  /** Compute and return the plan; touch nothing, record nothing. */
  readonly dryRun?: boolean;
  /**
   * A file with a conflicting hunk is left alone unless forced; forced, it gets the before
   * content of the oldest patch concerned (the user's later edits there are replaced; the
   * restore record keeps them, so undo brings them back). Hunk targets are never forced.
   */
  readonly force?: boolean;
}
