import { parsePatch } from 'diff';

// Where each hunk of a patch sits in the live file now, and whether rolling it back still
// applies: the CodeLens needs a line and a verdict for every hunk.

export type HunkState = 'applied' | 'reverted' | 'conflict';

export interface LiveHunk {
  /** Index in the patch's unified diff (what rollbackPatch(…, hunk) takes). */
  readonly index: number;
  /** 0-based first line in the live file (where the hunk is, or was expected). */
  readonly line: number;
  /** Lines the hunk covers in the live file when applied. */
  readonly lineCount: number;
  readonly state: HunkState;
  readonly added: number;
  readonly removed: number;
}

function sideLines(lines: readonly string[], side: 'before' | 'after'): string[] {
  const skip = side === 'before' ? '+' : '-';
  return lines.filter((l) => l[0] !== skip && l[0] !== '\\').map((l) => l.slice(1));
}

/** Index where `block` occurs in `text`, searching outward from `expected`; -1 when nowhere. */
export function findBlock(text: readonly string[], block: readonly string[], expected: number): number {
  if (block.length === 0) return Math.max(0, Math.min(expected, text.length));
  const last = text.length - block.length;
  const matchesAt = (at: number) => block.every((line, i) => text[at + i] === line);
  for (let distance = 0; distance <= Math.max(expected, last - expected); distance++) {
    for (const at of distance === 0 ? [expected] : [expected - distance, expected + distance]) {
      if (at >= 0 && at <= last && matchesAt(at)) return at;
    }
  }
  return -1;
}

export function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Each hunk of `unifiedDiff` located in `liveText`. */
export function locateHunks(unifiedDiff: string, liveText: string): LiveHunk[] {
  if (unifiedDiff.trim() === '') return [];
  const live = splitLines(liveText);
  const hunks = parsePatch(unifiedDiff)[0]?.hunks ?? [];
  let drift = 0;
  return hunks.map((hunk, index) => {
    const after = sideLines(hunk.lines, 'after');
    const before = sideLines(hunk.lines, 'before');
    const expected = Math.max(0, hunk.newStart - 1 + drift);
    const added = hunk.lines.filter((l) => l[0] === '+').length;
    const removed = hunk.lines.filter((l) => l[0] === '-').length;
    const at = findBlock(live, after, expected);
    if (at >= 0 && (after.length > 0 || findBlock(live, before, expected) < 0 || before.length === 0)) {
      drift = at - (hunk.newStart - 1);
      return { index, line: at, lineCount: after.length, state: 'applied', added, removed };
    }
    const beforeAt = findBlock(live, before, expected);
    if (beforeAt >= 0) return { index, line: beforeAt, lineCount: before.length, state: 'reverted', added, removed };
    return { index, line: Math.min(expected, Math.max(0, live.length - 1)), lineCount: after.length, state: 'conflict', added, removed };
  });
}
