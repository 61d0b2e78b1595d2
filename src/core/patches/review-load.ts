import { foldDecision } from '../store/fold';
import type { StoredRecord } from '../store/records';
import { ABSENT, decodeText } from './hash';
import { pendingReview, type Decisions, type PendingPatch, type ReviewDecision } from './review';
import { reviewHunksOf, type ReviewHunk } from './review-hunks';
import type { Patch } from './schema';

/** What the review reads of the store: a run's fold (its patches and review decisions), blobs. */
export interface ReviewSource {
  readRun(runId: string): Promise<{ readonly patches: readonly Patch[]; readonly decisions?: Decisions }>;
  getBlob(hash: string): Promise<Uint8Array>;
}

export interface RunReview {
  readonly runId: string;
  /** Every patch of the run by id, with its state now (a patch can come back to pending: a restore's undo). */
  readonly patches: ReadonlyMap<string, Patch>;
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
  return reviewHunksOf(patch.path, before, after, patch);
}

async function reviewOf(
  source: Pick<ReviewSource, 'getBlob'>,
  runId: string,
  patches: ReadonlyMap<string, Patch>,
  decisions: Decisions,
  cache: HunkCache,
): Promise<RunReview> {
  const pendingPatches = [...patches.values()].filter((p) => p.state === 'pending');
  for (const patch of pendingPatches) {
    if (!cache.has(patch.patchId)) cache.set(patch.patchId, await computeHunks(source, patch));
  }
  const pending = pendingReview(pendingPatches, decisions, (p) => cache.get(p.patchId) ?? undefined);
  return { runId, patches, pending, decisions };
}

/** The review set of one run, from its fold as the store reads it (the same after a reload). */
export async function loadRunReview(source: ReviewSource, runId: string, cache: HunkCache = new Map()): Promise<RunReview> {
  const state = await source.readRun(runId);
  return reviewOf(source, runId, new Map(state.patches.map((p) => [p.patchId, p])), state.decisions ?? new Map(), cache);
}

/** Records that change what waits for review. */
export const REVIEW_RECORDS: ReadonlySet<string> = new Set(['patch', 'patch_state', 'review', 'branch', 'fork', 'restore']);

/**
 * The review set after records appended to a run (by the runtime, a decision, a restore of this
 * window), folded into what was loaded before (`review` undefined: a run read with nothing
 * pending, or never read), without reading the run. Undefined when they cannot be folded so (a
 * branch, a patch unknown here coming back): read the run again. Only the patches the records
 * touch are looked at again: a Keep costs the same in a run of 10 patches or of 10,000. `review`
 * is consumed (its maps move into the result, changed): keep only the result.
 */
export async function withRecords(
  source: Pick<ReviewSource, 'getBlob'>,
  runId: string,
  review: RunReview | undefined,
  records: readonly StoredRecord[],
  cache: HunkCache,
): Promise<RunReview | undefined> {
  const patches = (review?.patches ?? new Map<string, Patch>()) as Map<string, Patch>;
  const decisions = (review?.decisions ?? new Map<string, Map<number, ReviewDecision>>()) as Map<string, Map<number, ReviewDecision>>;
  const touched = new Set<string>();
  // A patch that comes back to pending, or a patch record for an id already here, takes its old place: recompute in order.
  let inPlace = review !== undefined;
  const isNew = new Set<string>();
  for (const record of records) {
    if (record.type === 'branch' || record.type === 'fork') return undefined;
    if (record.type === 'patch') {
      if (patches.has(record.patch.patchId)) inPlace = false;
      isNew.add(record.patch.patchId);
      patches.set(record.patch.patchId, record.patch);
      touched.add(record.patch.patchId);
    } else if (record.type === 'review') {
      foldDecision(decisions, record);
      record.hunks.forEach((ref) => touched.add(ref.patchId));
    } else if (record.type === 'patch_state') {
      const patch = patches.get(record.patchId);
      if (patch) patches.set(record.patchId, { ...patch, state: record.state });
      else if (record.state === 'pending') return undefined;
      if (record.state === 'pending') inPlace = false;
      touched.add(record.patchId);
    }
  }
  if (!inPlace || !review) return reviewOf(source, runId, patches, decisions, cache);
  for (const id of touched) {
    const patch = patches.get(id);
    if (patch?.state === 'pending' && !cache.has(id)) cache.set(id, await computeHunks(source, patch));
  }
  const again = (patch: Patch) => pendingReview([patch], decisions, (p) => cache.get(p.patchId) ?? undefined);
  const pending: PendingPatch[] = [];
  for (const entry of review.pending) {
    if (touched.has(entry.patch.patchId)) pending.push(...again(patches.get(entry.patch.patchId)!));
    else pending.push(entry);
  }
  // New patches come last, as in the fold (a known patch back to pending was recomputed above).
  for (const id of isNew) pending.push(...again(patches.get(id)!));
  return { runId, patches, pending, decisions };
}
