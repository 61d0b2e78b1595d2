import { z } from 'zod';

export const ABSENT = 'absent';

/** A sha256 in lowercase hex: content hashes and blob names. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * A field that names a blob of the store by its sha256. Every record field that names a blob has
 * exactly this schema: the store finds them by walking the record schemas (store/refs.ts), so
 * garbage collection keeps what they name.
 */
export const BlobRef = z.string();

/** sha256 hex of the content (see hash.ts), or `absent` when the file does not exist. */
export const ContentHash = z.union([z.literal(ABSENT), z.string().regex(SHA256_HEX)]);

export const PatchState = z.enum(['pending', 'accepted', 'rolled_back']);
export const LiveState = z.enum(['applied', 'not_applied', 'conflict', 'missing']);

export const Patch = z.object({
  patchId: z.string().min(1),
  runId: z.string().min(1),
  stepId: z.number().int().nonnegative(),
  toolCallId: z.string(),
  /** Workspace-relative, forward slashes. */
  path: z.string().min(1),
  op: z.enum(['create', 'modify', 'delete']),
  beforeHash: ContentHash,
  afterHash: ContentHash,
  /** Blob hashes of the contents; absent side has none. Omitted above the size cap. */
  beforeBlob: BlobRef.optional(),
  afterBlob: BlobRef.optional(),
  added: z.number().int().nonnegative(),
  removed: z.number().int().nonnegative(),
  binary: z.boolean(),
  /**
   * The executable bit of each side, when the patch changes it: a command's `chmod` (a mode-only
   * patch: the same bytes on both sides), a created executable (`execAfter`), a deleted one
   * (`execBefore`). Absent: unchanged, or not known (a host without modes, records before them).
   */
  execBefore: z.boolean().optional(),
  execAfter: z.boolean().optional(),
  /** Set when content exceeded the size cap and is kept by hash only. */
  contentOmitted: z.boolean().optional(),
  /** The live buffer had unsaved user edits when the agent wrote; the agent did not save it. */
  wroteDirtyBuffer: z.boolean().optional(),
  createdAt: z.number(),
  state: PatchState,
});

export type ContentHash = z.infer<typeof ContentHash>;
export type PatchState = z.infer<typeof PatchState>;
export type LiveState = z.infer<typeof LiveState>;
export type Patch = z.infer<typeof Patch>;
