import type { HunkView } from '../../../core/patches/review';

export type MarkKind = 'added' | 'modified' | 'removed' | 'edited';

/** One mark: a line of the live text, its kind, the hunk it belongs to, the removed lines it stands for. */
export interface MarkLine {
  readonly kind: MarkKind;
  readonly line: number;
  readonly view: HunkView;
  /** For `removed`: how many lines the agent removed there. */
  readonly removedCount?: number;
  /** For `removed`, and the first line of a `modified` hunk: the first line the agent removed or replaced there. */
  readonly removedFirst?: string;
}

/**
 * The lines to mark for a file's hunks (no editor needed, so the bench measures the same code):
 * the agent's added lines (`modified` when the hunk also removed lines), where lines were removed
 * with nothing added in their place, and one line for a hunk the person edited since. Lines past
 * the end are clamped to `lastLine`.
 */
export function markLines(views: readonly HunkView[], lastLine: number): MarkLine[] {
  const out: MarkLine[] = [];
  const at = (line: number) => Math.min(line, lastLine);
  for (const view of views) {
    if (view.state === 'edited') {
      out.push({ kind: 'edited', line: at(view.line), view });
      continue;
    }
    const kind = view.hunk.removed.length > 0 ? 'modified' : 'added';
    const replaced = view.hunk.removed[0]?.lines[0];
    view.hunk.added.forEach((offset, i) => {
      const first = i === 0 && kind === 'modified' && replaced !== undefined ? { removedFirst: replaced } : {};
      out.push({ kind, line: at(view.line + offset), view, ...first });
    });
    for (const block of view.hunk.removed) {
      // Replaced lines are shown by the hover of the lines that replaced them.
      if (view.hunk.added.length > 0 && block.at < view.hunk.newCore.length) continue;
      out.push({
        kind: 'removed',
        line: at(view.line + block.at),
        view,
        removedCount: block.lines.length,
        ...(block.lines[0] !== undefined ? { removedFirst: block.lines[0] } : {}),
      });
    }
  }
  return out;
}
