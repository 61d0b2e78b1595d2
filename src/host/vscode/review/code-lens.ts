import * as vscode from 'vscode';
import type { HunkView } from '../../../core/patches/review';
import { modeWords } from '../../../words/words';
import { REVIEW_COMMANDS } from './ids';
import { PATCH_COMMANDS } from './patch-commands';

export interface LensSource {
  /** The hunks waiting for review in a document, where they are now. */
  viewsOf(document: vscode.TextDocument): readonly HunkView[];
  readonly onDidChange: vscode.Event<unknown>;
  /** The first line of a run's task, to name the run a change is of. */
  taskOf?(runId: string): string | undefined;
}

/** "Fix the parser" cut to fit a lens line. */
function shortTask(task: string | undefined): string {
  if (task === undefined || task === '') return '';
  return ` of "${task.length > 32 ? `${task.slice(0, 31)}…` : task}"`;
}

/** Keep / Undo above a hunk that waits for review, and what it is. */
export function hunkLenses(view: HunkView, task?: string): vscode.CodeLens[] {
  const range = new vscode.Range(view.line, 0, view.line, 0);
  const ref = { runId: view.patch.runId, patchId: view.patch.patchId, hunk: view.hunk.index };
  const added = view.hunk.added.length;
  const removed = view.hunk.removed.reduce((n, b) => n + b.lines.length, 0);
  const step = `Agent step ${view.patch.stepId}${shortTask(task)}`;
  const what =
    view.hunk.exec !== undefined
      ? `${step}: ${modeWords(view.patch)}`
      : view.state === 'edited'
        ? `$(warning) ${step}: edited since`
        : `${step} (+${added} −${removed})`;
  return [
    new vscode.CodeLens(range, {
      title: '$(check) Keep',
      command: REVIEW_COMMANDS.keepHunk,
      arguments: [ref],
      tooltip: 'Keep this change of the agent (it stops waiting for review)',
    }),
    new vscode.CodeLens(range, {
      title: '$(discard) Undo',
      command: REVIEW_COMMANDS.undoHunk,
      arguments: [ref],
      tooltip:
        view.hunk.exec !== undefined
          ? 'Set the executable bit back (refused if the file changed since)'
          : view.state === 'edited'
            ? 'You changed these lines since the agent wrote them: undo would conflict and leaves them alone'
            : 'Undo only this change; your other edits stay',
    }),
    new vscode.CodeLens(range, {
      title: what,
      command: PATCH_COMMANDS.openDiff,
      arguments: [{ runId: view.patch.runId, patchId: view.patch.patchId }],
      tooltip: 'Open the diff of this patch',
    }),
  ];
}

/** The review CodeLens: one Keep / Undo line above each agent hunk that waits for review. */
export class ReviewCodeLensProvider implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly source: LensSource) {
    this.subscription = source.onDidChange(() => this.changed.fire());
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    return this.source.viewsOf(document).flatMap((view) => hunkLenses(view, this.source.taskOf?.(view.patch.runId)));
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
