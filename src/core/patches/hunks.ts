import { structuredPatch, type StructuredPatch } from 'diff';

/** Lines of context around each hunk, for review and rollback matching. */
export const DIFF_CONTEXT = 3;
/** Above this edit length the diff gives up and the whole file is one hunk (deterministic). */
export const MAX_EDIT_LENGTH = 20_000;

/**
 * One hunk as line ranges (0-based, exclusive ends) with the exact lines, terminators
 * included, so that reversing a hunk never converts line endings.
 */
export interface LineHunk {
  readonly oldStart: number;
  readonly newStart: number;
  /** Context and removed lines, as in the before content. */
  readonly oldLines: readonly string[];
  /** Context and added lines, as in the after content. */
  readonly newLines: readonly string[];
  /** One character per line of the hunk in diff order: ' ' context, '-' removed, '+' added. */
  readonly ops: string;
}

/** Splits after every `\n`, keeping terminators (a lone `\r` is not a break, as in `diff`). */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', start)) {
    lines.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

function structured(path: string, before: string, after: string): StructuredPatch | undefined {
  return structuredPatch(path, path, before, after, undefined, undefined, {
    context: DIFF_CONTEXT,
    maxEditLength: MAX_EDIT_LENGTH,
  });
}

function countSides(lines: readonly string[]): { old: number; added: number; removed: number } {
  let old = 0;
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.startsWith(' ')) old++;
    else if (line.startsWith('-')) {
      old++;
      removed++;
    } else if (line.startsWith('+')) added++;
  }
  return { old, added, removed };
}

/** The ' ', '-', '+' of each hunk line ("\\ No newline" markers are not lines). */
function opsOf(lines: readonly string[]): string {
  let ops = '';
  for (const line of lines) if (line[0] === ' ' || line[0] === '-' || line[0] === '+') ops += line[0];
  return ops;
}

export interface TextDiff {
  readonly hunks: readonly LineHunk[];
  readonly added: number;
  readonly removed: number;
}

/** The hunks of before -> after (texts without BOM), the same every time for the same input. */
export function diffTexts(path: string, before: string, after: string): TextDiff {
  const beforeLines = splitLines(before);
  const afterLines = splitLines(after);
  const patch = before === after ? { hunks: [] } : structured(path, before, after);
  if (patch === undefined) {
    const ops = '-'.repeat(beforeLines.length) + '+'.repeat(afterLines.length);
    const whole: LineHunk = { oldStart: 0, newStart: 0, oldLines: beforeLines, newLines: afterLines, ops };
    return { hunks: [whole], added: afterLines.length, removed: beforeLines.length };
  }
  let added = 0;
  let removed = 0;
  const hunks = patch.hunks.map((h): LineHunk => {
    const sides = countSides(h.lines);
    added += sides.added;
    removed += sides.removed;
    const oldStart = h.oldLines > 0 ? h.oldStart - 1 : 0;
    const newStart = h.newLines > 0 ? h.newStart - 1 : 0;
    return {
      oldStart,
      newStart,
      oldLines: beforeLines.slice(oldStart, oldStart + h.oldLines),
      newLines: afterLines.slice(newStart, newStart + h.newLines),
      ops: opsOf(h.lines),
    };
  });
  return { hunks, added, removed };
}
