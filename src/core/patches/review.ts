import { z } from 'zod';
import { splitLines } from './hunks';
import { isReverted, locateHunk, type ReviewHunk } from './review-hunks';
import { findNearest } from './reverse';
import type { Patch } from './schema';

// Inline review: which hunks of which agent patches still wait for the person's decision.
// Derived from the one fold of the journal (patch records, their patch_state, review decisions:
// store/fold.ts) and the live text; nothing else is stored.

export const ReviewDecision = z.enum(['keep', 'undo']);
export type ReviewDecision = z.infer<typeof ReviewDecision>;

export const HunkRef = z.object({ patchId: z.string().min(1), hunk: z.number().int().nonnegative() });
export type HunkRef = z.infer<typeof HunkRef>;

/** The person kept or undid hunks of agent patches (an undo is recorded once its edit is made). */
export const ReviewRecord = z.object({
  v: z.number().int().positive(),
  at: z.number(),
  type: z.literal('review'),
  decision: ReviewDecision,
  hunks: z.array(HunkRef).min(1),
  /** The files of the hunks (an undo names them: a resume's bounded fold may no longer hold an older patch). */
  paths: z.array(z.string()).optional(),
});
export type ReviewRecord = z.infer<typeof ReviewRecord>;

/** patchId -> hunk index -> the latest decision, from a run's records in journal order. */
export type Decisions = ReadonlyMap<string, ReadonlyMap<number, ReviewDecision>>;

/** A pending patch and the hunks of it nobody decided on yet. */
export interface PendingPatch {
  readonly patch: Patch;
  readonly hunks: readonly ReviewHunk[];
}

/**
 * The review set of a run: patches still `pending` (not accepted, not rolled back: a restore and
 * its undo move patches in and out through patch_state) and their undecided hunks. `hunksOf`
 * gives a patch's hunks, or undefined when it has none to review (binary, over the size cap).
 */
export function pendingReview(
  patches: readonly Patch[],
  decisions: Decisions,
  hunksOf: (patch: Patch) => readonly ReviewHunk[] | undefined,
): PendingPatch[] {
  const out: PendingPatch[] = [];
  for (const patch of patches) {
    if (patch.state !== 'pending') continue;
    const decided = decisions.get(patch.patchId);
    const all = hunksOf(patch);
    // Kept even with no hunk left: an older patch's hunks it covers are then superseded, not edited.
    if (all !== undefined) out.push({ patch, hunks: all.filter((h) => !decided?.has(h.index)) });
  }
  return out;
}

/** waiting: the agent's lines are there; edited: the person changed them since (undo would conflict). */
export type HunkLiveState = 'waiting' | 'edited';

export interface HunkView {
  readonly patch: Patch;
  readonly hunk: ReviewHunk;
  readonly state: HunkLiveState;
  /** 0-based line of the new core in the live text (for edited: where it was expected). */
  readonly line: number;
}

export function hunkRef(view: Pick<HunkView, 'patch' | 'hunk'>): HunkRef {
  return { patchId: view.patch.patchId, hunk: view.hunk.index };
}

/** Where an edited hunk most likely is: after its leading context, else before its trailing one. */
function editedLine(lines: readonly string[], hunk: ReviewHunk, expected: number): number {
  const last = Math.max(0, lines.length - 1);
  const before = hunk.contextBefore.length;
  if (before > 0) {
    const at = findNearest(lines, hunk.contextBefore, 0, Math.max(0, expected - before));
    if (at !== -1) return Math.min(at + before, last);
  }
  if (hunk.contextAfter.length > 0) {
    const at = findNearest(lines, hunk.contextAfter, 0, expected + hunk.newCore.length);
    if (at !== -1) return Math.max(0, Math.min(at - hunk.newCore.length, last));
  }
  return Math.min(expected, last);
}

function viewsOfPatch(lines: readonly string[], pending: PendingPatch, superseded: boolean): HunkView[] {
  const views: HunkView[] = [];
  let drift = 0;
  let from = 0;
  for (const hunk of pending.hunks) {
    // The executable bit stands for the whole file: it waits at its top (Undo checks the live bit).
    if (hunk.exec !== undefined) {
      views.push({ patch: pending.patch, hunk, state: 'waiting', line: 0 });
      continue;
    }
    const expected = Math.max(0, hunk.newStart + drift);
    const at = locateHunk(lines, hunk, expected, from);
    if (at !== -1) {
      views.push({ patch: pending.patch, hunk, state: 'waiting', line: at });
      drift = at - hunk.newStart;
      from = at + hunk.newCore.length;
      continue;
    }
    // Changed by a newer agent patch of the file (its hunks cover it), or undone some other way.
    if (superseded || isReverted(lines, hunk, expected)) continue;
    views.push({ patch: pending.patch, hunk, state: 'edited', line: editedLine(lines, hunk, expected) });
  }
  return views;
}

/**
 * The hunks of one file's pending patches (oldest first) against its live text, ordered by line.
 * `lines` is splitLines(text); pass it when already split.
 */
export function reviewFile(text: string | readonly string[], pending: readonly PendingPatch[]): HunkView[] {
  const lines = typeof text === 'string' ? splitLines(text) : text;
  const views: HunkView[] = [];
  pending.forEach((p, i) => views.push(...viewsOfPatch(lines, p, i < pending.length - 1)));
  return views.sort((a, b) => a.line - b.line);
}

/** Lines of the live text with the hunk undone: new core replaced by old core; undefined when edited. */
export function undoneLines(lines: readonly string[], view: HunkView): string[] | undefined {
  if (view.state !== 'waiting') return undefined;
  const { line, hunk } = view;
  return [...lines.slice(0, line), ...hunk.oldCore, ...lines.slice(line + hunk.newCore.length)];
}

/** The patches whose every hunk is decided as kept once `refs` are kept: they can be accepted. */
export function fullyKept(pending: readonly PendingPatch[], refs: readonly HunkRef[], decisions: Decisions): string[] {
  const keeping = new Set(refs.map((r) => `${r.patchId}:${r.hunk}`));
  return pending
    .filter((p) => p.hunks.every((h) => keeping.has(`${p.patch.patchId}:${h.index}`)))
    .filter((p) => [...(decisions.get(p.patch.patchId)?.values() ?? [])].every((d) => d === 'keep'))
    .map((p) => p.patch.patchId);
}
