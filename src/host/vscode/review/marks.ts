import * as vscode from 'vscode';
import type { HunkView } from '../../../core/patches/review';
import { REVIEW_COMMANDS } from './ids';
import { markLines } from './mark-lines';

/** Line numbers an editor's marks were last set to, per kind (what the person sees). */
export interface AppliedMarks {
  readonly added: number[];
  readonly modified: number[];
  readonly removed: number[];
  readonly edited: number[];
}

type Kind = keyof AppliedMarks;

const color = (id: string) => new vscode.ThemeColor(`agentCheckpoints.review.${id}`);

function lineType(extensionUri: vscode.Uri, kind: 'added' | 'modified' | 'edited'): vscode.TextEditorDecorationType {
  return vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: kind === 'edited' ? undefined : color(`${kind}LineBackground`),
    gutterIconPath: vscode.Uri.joinPath(extensionUri, 'media', `review-${kind}.svg`),
    gutterIconSize: 'contain',
    overviewRulerColor: color(`${kind}OverviewRuler`),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
}

function removedType(): vscode.TextEditorDecorationType {
  return vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    borderColor: color('removedLineIndicator'),
    borderStyle: 'dashed',
    borderWidth: '1px 0 0 0',
    overviewRulerColor: color('removedLineIndicator'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
}

/** The hover of a hunk: what the agent removed or replaced, and Keep / Undo links. */
export function hunkHover(view: HunkView, languageId: string): vscode.MarkdownString {
  const ref = encodeURIComponent(JSON.stringify([{ runId: view.patch.runId, patchId: view.patch.patchId, hunk: view.hunk.index }]));
  const md = new vscode.MarkdownString(undefined, true);
  md.isTrusted = { enabledCommands: [REVIEW_COMMANDS.keepHunk, REVIEW_COMMANDS.undoHunk] };
  const state = view.state === 'edited' ? ' · $(warning) edited since: Undo would conflict' : '';
  md.appendMarkdown(`**Agent change, step ${view.patch.stepId}**${state}\n\n`);
  const old = view.hunk.removed.flatMap((b) => b.lines).join('');
  if (old.length > 0) {
    md.appendMarkdown('Replaced or removed:\n');
    md.appendCodeblock(old.replace(/\r?\n$/, ''), languageId);
  } else md.appendMarkdown('Lines added; nothing removed.\n\n');
  md.appendMarkdown(`[Keep](command:${REVIEW_COMMANDS.keepHunk}?${ref}) · [Undo](command:${REVIEW_COMMANDS.undoHunk}?${ref})`);
  return md;
}

/** One removed line as it reads beside the live text: trimmed, at most 60 characters. */
function excerpt(line: string): string {
  const text = line.replace(/\r?\n$/, '').trim();
  return text.length > 60 ? `${text.slice(0, 59)}…` : text === '' ? '(empty line)' : text;
}

/** Decoration options per kind for the hunks of one document. */
export function marksOf(document: vscode.TextDocument, views: readonly HunkView[]): Record<Kind, vscode.DecorationOptions[]> {
  const out: Record<Kind, vscode.DecorationOptions[]> = { added: [], modified: [], removed: [], edited: [] };
  const hovers = new Map<HunkView, vscode.MarkdownString>();
  const hoverOf = (view: HunkView) => hovers.get(view) ?? hovers.set(view, hunkHover(view, document.languageId)).get(view)!;
  for (const mark of markLines(views, Math.max(0, document.lineCount - 1))) {
    const range = new vscode.Range(mark.line, 0, mark.line, 0);
    const hoverMessage = hoverOf(mark.view);
    const after = (contentText: string) => ({ after: { contentText, color: color('removedLineIndicator'), fontStyle: 'italic' } });
    if (mark.kind !== 'removed') {
      // The first line of a replacement shows what it replaced, without a hover.
      const was = mark.removedFirst !== undefined ? { renderOptions: after(`  ⟵ was: ${excerpt(mark.removedFirst)}`) } : {};
      out[mark.kind].push({ range, hoverMessage, ...was });
      continue;
    }
    const n = mark.removedCount ?? 0;
    const first = mark.removedFirst !== undefined ? `: ${excerpt(mark.removedFirst)}` : '';
    const more = n > 1 ? ` (+${n - 1} more line${n === 2 ? '' : 's'}, hover to see)` : '';
    out.removed.push({ range, hoverMessage, renderOptions: after(`  ⌫ removed${first}${more}`) });
  }
  return out;
}

/**
 * The editor marks of the review: added and changed lines (text, gutter, overview ruler), where
 * lines were removed (the old text in a hover), and hunks the person edited since. Decorations
 * are per editor: set again whenever an editor shows or its document's hunks move.
 */
export class ReviewMarks implements vscode.Disposable {
  private readonly types: Record<Kind, vscode.TextEditorDecorationType>;
  private readonly applied = new Map<string, AppliedMarks>();

  constructor(extensionUri: vscode.Uri) {
    this.types = {
      added: lineType(extensionUri, 'added'),
      modified: lineType(extensionUri, 'modified'),
      edited: lineType(extensionUri, 'edited'),
      removed: removedType(),
    };
  }

  apply(editor: vscode.TextEditor, views: readonly HunkView[]): void {
    const marks = marksOf(editor.document, views);
    for (const kind of Object.keys(this.types) as Kind[]) editor.setDecorations(this.types[kind], marks[kind]);
    const lines = (kind: Kind) => marks[kind].map((m) => m.range.start.line);
    this.applied.set(editor.document.uri.toString(), {
      added: lines('added'),
      modified: lines('modified'),
      removed: lines('removed'),
      edited: lines('edited'),
    });
  }

  /** What the marks of a document were last set to (for tests and the bench). */
  appliedTo(uri: vscode.Uri): AppliedMarks | undefined {
    return this.applied.get(uri.toString());
  }

  dispose(): void {
    for (const type of Object.values(this.types)) type.dispose();
  }
}
