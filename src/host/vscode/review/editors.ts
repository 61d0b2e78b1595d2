import * as vscode from 'vscode';
import { decodeText } from '../../../core/patches/hash';
import { REVIEW_RECORDS } from '../../../core/patches/review-load';
import type { Workspace } from '../../../core/ports';
import type { StoredRecord } from '../../../core/store/records';
import { REVIEW_COMMANDS, REVIEW_CONTEXT } from './ids';
import type { ReviewMarks } from './marks';
import type { ReviewModel } from './model';

/** Typing is coalesced this long before a file's hunks are located again. */
const TYPING_MS = 15;
/** Appends to one run (a step of a live run writes several groups) are coalesced this long before it is read again. */
const RECORDS_MS = 250;

function statusItem(): vscode.StatusBarItem {
  const item = vscode.window.createStatusBarItem('agentCheckpoints.review', vscode.StatusBarAlignment.Left, 50);
  item.name = 'Agent changes to review';
  item.command = REVIEW_COMMANDS.next;
  item.tooltip = 'Agent changes waiting for Keep or Undo: go to the next one';
  return item;
}

/**
 * Keeps the editors in step with the review model, in one place: marks on every visible editor
 * of a file whose hunks moved, the status bar count, the context keys; and the model in step with
 * the buffers (typing), the disk (files not open) and the journal (records appended).
 */
export class ReviewEditors implements vscode.Disposable {
  private readonly status = statusItem();
  private readonly typing = new Map<string, NodeJS.Timeout>();
  private readonly reads = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly model: ReviewModel,
    private readonly marks: ReviewMarks,
    private readonly pathOf: (uri: vscode.Uri) => string | undefined,
    private readonly workspace: Pick<Workspace, 'read'>,
  ) {}

  paint(paths?: readonly string[]): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const path = this.pathOf(editor.document.uri);
      if (path !== undefined && (paths === undefined || paths.includes(path))) this.marks.apply(editor, this.model.viewsOf(path));
    }
    const n = this.model.count();
    this.status.text = `$(diff-multiple) ${n} change${n === 1 ? '' : 's'} to review`;
    if (n > 0) this.status.show();
    else this.status.hide();
    void vscode.commands.executeCommand('setContext', REVIEW_CONTEXT.hasChanges, n > 0);
    this.activeChanged();
  }

  activeChanged(): void {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const path = uri && this.pathOf(uri);
    const has = path !== undefined && this.model.viewsOf(path).length > 0;
    void vscode.commands.executeCommand('setContext', REVIEW_CONTEXT.activeHasChanges, has);
  }

  /** Editors shown (a file opened, a tab switched): locate from their text, then paint. */
  shown(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const path = this.pathOf(editor.document.uri);
      if (path !== undefined && this.model.hasPending(path)) this.model.update(path, editor.document.getText());
    }
    this.paint();
  }

  typed(document: vscode.TextDocument): void {
    const path = this.pathOf(document.uri);
    if (path === undefined || !this.model.hasPending(path) || this.typing.has(path)) return;
    const timer = setTimeout(() => {
      this.typing.delete(path);
      this.model.update(path, document.getText());
    }, TYPING_MS);
    this.typing.set(path, timer);
  }

  /** Records were appended to a run; `records` when a writer of this window wrote them (folded in, nothing read). */
  recordsChanged(runId: string, records?: readonly StoredRecord[]): void {
    if (records) {
      const relevant = records.filter((r) => REVIEW_RECORDS.has(r.type));
      // A step that wrote no file changes nothing to review.
      if (relevant.length > 0) void this.model.recordsAppended(runId, relevant);
      return;
    }
    if (this.reads.has(runId)) return;
    const timer = setTimeout(() => {
      this.reads.delete(runId);
      void this.model.reloadRun(runId);
    }, RECORDS_MS);
    this.reads.set(runId, timer);
  }

  /** Files changed on disk (an open document is followed as it is typed into). */
  async liveChanged(paths: readonly string[]): Promise<void> {
    for (const path of paths) {
      if (!this.model.hasPending(path) || vscode.workspace.textDocuments.some((d) => this.pathOf(d.uri) === path)) continue;
      const live = await this.workspace.read(path).catch(() => null);
      this.model.update(path, live === null ? '' : (decodeText(live.bytes)?.text ?? ''));
    }
  }

  dispose(): void {
    for (const timer of [...this.typing.values(), ...this.reads.values()]) clearTimeout(timer);
    this.status.dispose();
  }
}
