import * as vscode from 'vscode';
import type { HunkView } from '../../../core/patches/review';
import { REVIEW_COMMANDS } from './ids';

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

function lastLine(document: vscode.TextDocument): number {
  return Math.max(0, document.lineCount - 1);
}

/** Decoration options per kind for the hunks of one document. */
export function marksOf(document: vscode.TextDocument, views: readonly HunkView[]): Record<Kind, vscode.DecorationOptions[]> {
  const out: Record<Kind, vscode.DecorationOptions[]> = { added: [], modified: [], removed: [], edited: [] };
  const max = lastLine(document);
  const at = (line: number) => new vscode.Range(Math.min(line, max), 0, Math.min(line, max), 0);
  for (const view of views) {
    const hoverMessage = hunkHover(view, document.languageId);
    if (view.state === 'edited') {
      out.edited.push({ range: at(view.line), hoverMessage });
      continue;
    }
    const kind: Kind = view.hunk.removed.length > 0 ? 'modified' : 'added';
    for (const offset of view.hunk.added) out[kind].push({ range: at(view.line + offset), hoverMessage });
    for (const block of view.hunk.removed) {
      if (view.hunk.added.length > 0 && block.at < view.hunk.newCore.length) continue;
      const label = `${block.lines.length} line${block.lines.length === 1 ? '' : 's'} removed by the agent (hover to see)`;
      out.removed.push({
        range: at(view.line + block.at),
        hoverMessage,
        renderOptions: { after: { contentText: `  ⌫ ${label}`, color: color('removedLineIndicator'), fontStyle: 'italic' } },
      });
    }
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
