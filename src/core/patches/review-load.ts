import { ABSENT, decodeText } from './hash';
import { foldDecisions, pendingReview, type Decisions, type PendingPatch } from './review';
import { reviewHunksOf, type ReviewHunk } from './review-hunks';
import type { Patch } from './schema';

/** What the review reads of the store: a run's folded patches, its records, blobs. */
export interface ReviewSource {
  readRun(runId: string): Promise<{ readonly patches: readonly Patch[] }>;
  readRecords(runId: string): Promise<readonly { readonly type: string }[]>;
  getBlob(hash: string): Promise<Uint8Array>;
}

export interface RunReview {
  readonly runId: string;
  readonly pending: readonly PendingPatch[];
  readonly decisions: Decisions;
}

/** A patch's hunks never change: computed once per patchId (null: nothing to review inline). */
export type HunkCache = Map<string, readonly ReviewHunk[] | null>;

async function sideText(source: Pick<ReviewSource, 'getBlob'>, hash: string, blob: string | undefined): Promise<string | undefined> {
  if (hash === ABSENT) return '';
  if (blob === undefined) return undefined;
  return decodeText(await source.getBlob(blob))?.text;
}

async function computeHunks(source: Pick<ReviewSource, 'getBlob'>, patch: Patch): Promise<readonly ReviewHunk[] | null> {
  // A deleted file has no lines to mark; binary or over-cap content has no text hunks.
  if (patch.binary || patch.contentOmitted || patch.afterHash === ABSENT) return null;
  const before = await sideText(source, patch.beforeHash, patch.beforeBlob).catch(() => undefined);
  const after = await sideText(source, patch.afterHash, patch.afterBlob).catch(() => undefined);
  if (before === undefined || after === undefined) return null;
  return reviewHunksOf(patch.path, before, after);
}

/** The review set of one run, re-derived from what is on disk (the same after a reload). */
export async function loadRunReview(source: ReviewSource, runId: string, cache: HunkCache = new Map()): Promise<RunReview> {
  const state = await source.readRun(runId);
  const pendingPatches = state.patches.filter((p) => p.state === 'pending');
  const decisions = pendingPatches.length > 0 ? foldDecisions(await source.readRecords(runId)) : new Map();
  for (const patch of pendingPatches) {
    if (!cache.has(patch.patchId)) cache.set(patch.patchId, await computeHunks(source, patch));
  }
  const pending = pendingReview(pendingPatches, decisions, (p) => cache.get(p.patchId) ?? undefined);
  return { runId, pending, decisions };
}

/**
 * The review set after the runtime appended patches to a run: they come with no decision, so
 * the run is not read again; `review` is what was loaded before (undefined: nothing pending).
 */
export async function withAppendedPatches(
  source: Pick<ReviewSource, 'getBlob'>,
  runId: string,
  review: RunReview | undefined,
  patches: readonly Patch[],
  cache: HunkCache,
): Promise<RunReview> {
  const decisions = review?.decisions ?? new Map();
  for (const patch of patches) {
    if (patch.state === 'pending' && !cache.has(patch.patchId)) cache.set(patch.patchId, await computeHunks(source, patch));
  }
  const added = new Set(patches.map((p) => p.patchId));
  const before = (review?.pending ?? []).filter((p) => !added.has(p.patch.patchId));
  const pending = [...before, ...pendingReview(patches, decisions, (p) => cache.get(p.patchId) ?? undefined)];
  return { runId, pending, decisions };
}
