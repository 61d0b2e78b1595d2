import { diffTexts, type LineHunk } from './hunks';
import type { ExecBits } from './exec-bit';
import { findNearest } from './reverse';

/** Lines the agent removed, shown where they were: before line `at` of the hunk's new core. */
export interface RemovedBlock {
  readonly at: number;
  readonly lines: readonly string[];
}

/**
 * One hunk of a patch as the review sees it: its core (first to last changed line, terminators
 * kept) and the context around it. Undo replaces the new core by the old core in the live text.
 */
export interface ReviewHunk {
  /** Index among the patch's hunks (diffTexts numbering, as rollback uses). */
  readonly index: number;
  /** 0-based line of the new core in the patch's after content. */
  readonly newStart: number;
  readonly contextBefore: readonly string[];
  readonly contextAfter: readonly string[];
  readonly oldCore: readonly string[];
  readonly newCore: readonly string[];
  /** Offsets in newCore of the lines the agent added. */
  readonly added: readonly number[];
  readonly removed: readonly RemovedBlock[];
  /**
   * A change of the executable bit (a command's chmod): the bit the agent gave the file. Such a
   * hunk has no lines; it stands for the whole file, at its top, numbered after the text hunks.
   */
  readonly exec?: boolean;
}

function coreBounds(ops: string): { first: number; last: number } {
  let first = 0;
  while (first < ops.length && ops[first] === ' ') first++;
  let last = ops.length - 1;
  while (last > first && ops[last] === ' ') last--;
  return { first, last };
}

/** Splits one LineHunk into context / core, with added offsets and removed blocks. */
export function shapeHunk(hunk: LineHunk, index: number): ReviewHunk {
  const { first, last } = coreBounds(hunk.ops);
  const oldCore: string[] = [];
  const newCore: string[] = [];
  const contextBefore: string[] = [];
  const contextAfter: string[] = [];
  const added: number[] = [];
  const removed: RemovedBlock[] = [];
  let oi = 0;
  let ni = 0;
  let block: string[] | undefined;
  for (let k = 0; k < hunk.ops.length; k++) {
    const op = hunk.ops[k];
    if (op !== '-') block = undefined;
    if (k < first || k > last) {
      (k < first ? contextBefore : contextAfter).push(hunk.newLines[ni]!);
      oi++;
      ni++;
    } else if (op === ' ') {
      oldCore.push(hunk.oldLines[oi++]!);
      newCore.push(hunk.newLines[ni++]!);
    } else if (op === '-') {
      const line = hunk.oldLines[oi++]!;
      oldCore.push(line);
      if (block === undefined) {
        block = [];
        removed.push({ at: newCore.length, lines: block });
      }
      block.push(line);
    } else {
      added.push(newCore.length);
      newCore.push(hunk.newLines[ni++]!);
    }
  }
  const newStart = hunk.newStart + contextBefore.length;
  return { index, newStart, contextBefore, contextAfter, oldCore, newCore, added, removed };
}

/**
 * The review hunks of before -> after (texts without BOM), and one for the executable bit when
 * `bits` flip it (a mode-only patch has only that one).
 */
export function reviewHunksOf(path: string, before: string, after: string, bits: ExecBits = {}): ReviewHunk[] {
  const hunks = diffTexts(path, before, after).hunks.map(shapeHunk);
  const { execBefore, execAfter } = bits;
  if (execBefore === undefined || execAfter === undefined || execBefore === execAfter) return hunks;
  const lines = { contextBefore: [], contextAfter: [], oldCore: [], newCore: [], added: [], removed: [] };
  return [...hunks, { index: hunks.length, newStart: 0, ...lines, exec: execAfter }];
}

/**
 * Where the hunk's new core is in the live lines now, searching outward from `expected`: first
 * with its context (exact), then the core alone (the person edited a line next to it); -1 when
 * the agent's lines are no longer there as it wrote them.
 */
export function locateHunk(lines: readonly string[], hunk: ReviewHunk, expected: number, from = 0): number {
  const whole = [...hunk.contextBefore, ...hunk.newCore, ...hunk.contextAfter];
  if (whole.length === 0) return lines.length === 0 ? 0 : -1;
  const at = findNearest(lines, whole, from, Math.max(0, expected - hunk.contextBefore.length));
  if (at !== -1) return at + hunk.contextBefore.length;
  if (hunk.newCore.length === 0) return -1;
  return findNearest(lines, hunk.newCore, from, expected);
}

/** True when the live lines hold the hunk as it was before the agent (undone some other way). */
export function isReverted(lines: readonly string[], hunk: ReviewHunk, expected: number): boolean {
  const whole = [...hunk.contextBefore, ...hunk.oldCore, ...hunk.contextAfter];
  if (whole.length === 0) return false;
  return findNearest(lines, whole, 0, Math.max(0, expected - hunk.contextBefore.length)) !== -1;
}
