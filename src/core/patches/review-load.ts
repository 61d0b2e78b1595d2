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

async function sideText(source: ReviewSource, hash: string, blob: string | undefined): Promise<string | undefined> {
  if (hash === ABSENT) return '';
  if (blob === undefined) return undefined;
  return decodeText(await source.getBlob(blob))?.text;
}

async function computeHunks(source: ReviewSource, patch: Patch): Promise<readonly ReviewHunk[] | null> {
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
