import * as vscode from 'vscode';
import { fullyKept, hunkRef, type HunkRef, type HunkView } from '../../../core/patches/review';
import type { DecisionRecord } from '../../../core/store/contract';
import type { ReviewModel } from './model';

export interface ReviewActionsDeps {
  readonly model: ReviewModel;
  /** Appends a person's decisions to the run (the light path); the model learns them from the feed. */
  appendToRun(runId: string, records: DecisionRecord[]): Promise<void>;
  /** Throws when the run cannot take a decision now (it runs in this window). */
  checkWritable(runId: string): void;
  fileUri(path: string): vscode.Uri | undefined;
}

export interface UndoOutcome {
  readonly undone: number;
  /** Hunks edited since the agent wrote them, or overlapping another: left as they are. */
  readonly conflicts: number;
}

function byRun(views: readonly HunkView[]): Map<string, HunkView[]> {
  const out = new Map<string, HunkView[]>();
  for (const v of views) out.set(v.patch.runId, [...(out.get(v.patch.runId) ?? []), v]);
  return out;
}

const key = (ref: HunkRef) => `${ref.patchId}:${ref.hunk}`;

/** The live range of a hunk's new core (to the end of the text when it holds the last line). */
function coreRange(document: vscode.TextDocument, view: HunkView): vscode.Range {
  const end = view.line + view.hunk.newCore.length;
  const endPos = end < document.lineCount ? new vscode.Position(end, 0) : document.lineAt(document.lineCount - 1).range.end;
  return new vscode.Range(new vscode.Position(Math.min(view.line, document.lineCount - 1), 0), endPos);
}

/** Keep and Undo of hunks: decisions become review records of each hunk's run. */
export class ReviewActions {
  constructor(private readonly deps: ReviewActionsDeps) {}

  /** Records a keep; a patch whose every hunk is now kept is also accepted (patch_state). */
  async keep(views: readonly HunkView[]): Promise<number> {
    for (const [runId, list] of byRun(views)) {
      this.deps.checkWritable(runId);
      const refs = list.map(hunkRef);
      const review = this.deps.model.runReview(runId);
      const accepted = review ? fullyKept(review.pending, refs, review.decisions) : [];
      await this.deps.appendToRun(runId, [
        { type: 'review', decision: 'keep', hunks: refs },
        ...accepted.map((patchId): DecisionRecord => ({
          type: 'patch_state',
          patchId,
          state: 'accepted',
          reason: 'every hunk kept in review',
        })),
      ]);
      await this.deps.model.settled();
    }
    return views.length;
  }

  /**
   * Reverses hunks of one file against its LIVE text with one WorkspaceEdit (the person's other
   * edits stay; a clean buffer is saved afterwards, as the agent's own writes are), then records
   * the undo. A hunk whose lines were edited since is a conflict: reported, never forced.
   */
  async undo(path: string, refs: readonly HunkRef[]): Promise<UndoOutcome> {
    const uri = this.deps.fileUri(path);
    if (!uri) throw new Error(`${path} is outside the workspace folders`);
    for (const runId of new Set(this.deps.model.viewsOf(path).map((v) => v.patch.runId))) this.deps.checkWritable(runId);
    const document = await vscode.workspace.openTextDocument(uri);
    const wasDirty = document.isDirty;
    this.deps.model.update(path, document.getText());
    const wanted = new Set(refs.map(key));
    const views = this.deps.model.viewsOf(path).filter((v) => wanted.has(key(hunkRef(v))));
    const chosen: HunkView[] = [];
    let conflicts = 0;
    for (const view of [...views].sort((a, b) => b.line - a.line)) {
      const next = chosen[chosen.length - 1];
      if (view.state !== 'waiting' || (next && view.line + view.hunk.newCore.length > next.line)) conflicts++;
      else chosen.push(view);
    }
    if (chosen.length === 0) return { undone: 0, conflicts };
    const edit = new vscode.WorkspaceEdit();
    for (const view of chosen) edit.replace(uri, coreRange(document, view), view.hunk.oldCore.join(''));
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`the editor refused the edit of ${path}; nothing was undone`);
    if (!wasDirty) await document.save();
    for (const [runId, list] of byRun(chosen)) {
      await this.deps.appendToRun(runId, [{ type: 'review', decision: 'undo', hunks: list.map(hunkRef), paths: [path] }]);
      await this.deps.model.settled();
    }
    return { undone: chosen.length, conflicts };
  }

  /** Undo of every given hunk, file by file. */
  async undoAll(views: readonly HunkView[]): Promise<UndoOutcome> {
    const perPath = new Map<string, HunkRef[]>();
    for (const v of views) perPath.set(v.patch.path, [...(perPath.get(v.patch.path) ?? []), hunkRef(v)]);
    let undone = 0;
    let conflicts = 0;
    for (const [path, refs] of perPath) {
      const outcome = await this.undo(path, refs);
      undone += outcome.undone;
      conflicts += outcome.conflicts;
    }
    return { undone, conflicts };
  }
}
