import * as vscode from 'vscode';
import { fullyKept, hunkRef, type HunkRef, type HunkView } from '../../../core/patches/review';
import type { DecisionRecord } from '../../../core/store/contract';
import { splitLines } from '../../../core/patches/hunks';
import type { Patch } from '../../../core/patches/schema';
import type { ReviewModel } from './model';

export interface ReviewActionsDeps {
  readonly model: ReviewModel;
  /** Appends a person's decisions to the run (the light path); the model learns them from the feed. */
  appendToRun(runId: string, records: DecisionRecord[]): Promise<void>;
  /** Throws when the run cannot take a decision now (it runs in this window). */
  checkWritable(runId: string): void;
  /**
   * An inline Undo of hunks of a file of one run, recorded as a restore around the edit (RestoreActions.undoHunks);
   * `mode`: the patch whose executable bit goes back too. False: the file changed meanwhile.
   */
  undoHunks(runId: string, path: string, hunks: readonly HunkRef[], transform: (live: string) => string, mode?: Patch): Promise<boolean>;
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

/** A change of the executable bit: no lines, so it overlaps only another change of the bit. */
const isBit = (view: HunkView): boolean => view.hunk.exec !== undefined;

/** The hunks that can be undone (waiting, not overlapping another; one change of the bit), bottom first, and how many cannot. */
function chooseHunks(views: readonly HunkView[]): { chosen: HunkView[]; overlapping: number } {
  const chosen: HunkView[] = [];
  let overlapping = 0;
  for (const view of [...views].sort((a, b) => b.line - a.line)) {
    const next = chosen.filter((c) => !isBit(c)).at(-1);
    const overlaps = isBit(view) ? chosen.some(isBit) : next !== undefined && view.line + view.hunk.newCore.length > next.line;
    if (view.state !== 'waiting' || overlaps) overlapping++;
    else chosen.push(view);
  }
  return { chosen, overlapping };
}

/** The text with each chosen hunk's new lines put back to its old ones (bottom first, so lines above keep their place). */
function undoneText(text: string, chosen: readonly HunkView[]): string {
  const lines = splitLines(text);
  for (const view of chosen) lines.splice(view.line, view.hunk.newCore.length, ...view.hunk.oldCore);
  return lines.join('');
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
   * Reverses hunks of one file against its LIVE text (the person's other edits stay; a buffer with
   * unsaved edits is edited, not saved; a clean one is saved, as the agent's own writes are), run
   * by run, each as a restore recorded before the edit and confirmed after it. A hunk whose lines
   * were edited since, or that overlaps another, is a conflict: reported, never forced.
   */
  async undo(path: string, refs: readonly HunkRef[]): Promise<UndoOutcome> {
    const uri = this.deps.fileUri(path);
    if (!uri) throw new Error(`${path} is outside the workspace folders`);
    for (const runId of new Set(this.deps.model.viewsOf(path).map((v) => v.patch.runId))) this.deps.checkWritable(runId);
    const document = await vscode.workspace.openTextDocument(uri);
    const wanted = new Set(refs.map(key));
    let undone = 0;
    let conflicts = 0;
    const runs = new Set<string>();
    for (let round = 0; round < refs.length; round++) {
      // The hunks are located again in the text as each run's undo left it.
      const text = document.getText();
      this.deps.model.update(path, text);
      const views = this.deps.model.viewsOf(path).filter((v) => wanted.has(key(hunkRef(v))) && !runs.has(v.patch.runId));
      const runId = views[0]?.patch.runId;
      if (runId === undefined) break;
      runs.add(runId);
      const { chosen, overlapping } = chooseHunks(views.filter((v) => v.patch.runId === runId));
      conflicts += overlapping;
      if (chosen.length === 0) continue;
      const written = await this.deps.undoHunks(
        runId,
        path,
        chosen.map(hunkRef),
        (live) => {
          if (live !== text) throw new Error(`${path} changed while its hunks were being undone; nothing was undone`);
          return undoneText(live, chosen);
        },
        chosen.find(isBit)?.patch,
      );
      if (written) undone += chosen.length;
      else conflicts += chosen.length;
      await this.deps.model.settled();
    }
    return { undone, conflicts };
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
