import { splitLines, type LineHunk } from './hunks';

/** revert: the hunk is undone; conflict: its lines are not found as the agent left them; skip: not asked for. */
export type HunkOutcome = 'revert' | 'conflict' | 'skip';

export interface ReverseResult {
  /** Current text with every hunk that reverted undone (conflicting ones left as they are). */
  readonly text: string;
  readonly outcomes: readonly HunkOutcome[];
}

function matchesAt(lines: readonly string[], at: number, wanted: readonly string[]): boolean {
  for (let i = 0; i < wanted.length; i++) if (lines[at + i] !== wanted[i]) return false;
  return true;
}

/** Exact position of `wanted` in lines[from..], the one nearest to `expected`; -1 when absent. */
export function findNearest(lines: readonly string[], wanted: readonly string[], from: number, expected: number): number {
  const last = lines.length - wanted.length;
  if (last < from) return -1;
  const start = Math.min(Math.max(expected, from), last);
  for (let d = 0; start - d >= from || start + d <= last; d++) {
    if (start - d >= from && matchesAt(lines, start - d, wanted)) return start - d;
    if (d > 0 && start + d <= last && matchesAt(lines, start + d, wanted)) return start + d;
  }
  return -1;
}

function endsWithoutNewline(lines: readonly string[]): boolean {
  const last = lines[lines.length - 1];
  return last !== undefined && !last.endsWith('\n');
}

/**
 * Reverses the selected hunks (all when `selected` is omitted) against the current text: each
 * hunk's after-lines (context included, byte for byte, line endings included) must be found
 * intact, and are replaced by its before-lines. No fuzz: a hunk whose lines the user changed is
 * a conflict and nothing of it is touched. Lines outside matched hunks are kept as they are.
 */
export function reverseHunks(current: string, hunks: readonly LineHunk[], selected?: ReadonlySet<number>): ReverseResult {
  const lines = splitLines(current);
  const out: string[] = [];
  const outcomes: HunkOutcome[] = [];
  let cursor = 0;
  let offset = 0;
  hunks.forEach((hunk, index) => {
    if (selected !== undefined && !selected.has(index)) {
      outcomes.push('skip');
      return;
    }
    const at = locate(lines, hunk, cursor, hunk.newStart + offset);
    if (at === -1) {
      outcomes.push('conflict');
      return;
    }
    out.push(...lines.slice(cursor, at), ...hunk.oldLines);
    cursor = at + hunk.newLines.length;
    offset = at - hunk.newStart;
    outcomes.push('revert');
  });
  out.push(...lines.slice(cursor));
  return { text: out.join(''), outcomes };
}

function locate(lines: readonly string[], hunk: LineHunk, from: number, expected: number): number {
  if (hunk.newLines.length === 0) {
    // The agent emptied the file: only an empty file can take the old content back as is.
    return lines.length === 0 ? 0 : -1;
  }
  const at = findNearest(lines, hunk.newLines, from, expected);
  if (at === -1) return -1;
  // Old content without a final newline must stay last, or it would glue onto the user's next line.
  const followed = at + hunk.newLines.length < lines.length;
  return followed && endsWithoutNewline(hunk.oldLines) ? -1 : at;
}
