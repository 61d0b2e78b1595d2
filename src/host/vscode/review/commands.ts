import * as vscode from 'vscode';
import type { HunkView } from '../../../core/patches/review';
import type { ReviewActions, UndoOutcome } from './actions';
import { HunkArg, REVIEW_COMMANDS, RunArg } from './ids';
import type { ReviewModel } from './model';

export interface ReviewCommandDeps {
  readonly model: ReviewModel;
  readonly actions: ReviewActions;
  relativePath(uri: vscode.Uri): string | undefined;
  fileUri(path: string): vscode.Uri | undefined;
}

/** The hunk a command names, or the one under the cursor of the active editor. */
export function hunkAt(deps: ReviewCommandDeps, arg: unknown): HunkView | undefined {
  const model = deps.model;
  const parsed = HunkArg.safeParse(arg);
  if (parsed.success) {
    for (const path of model.paths()) {
      const found = model
        .viewsOf(path)
        .find((v) => v.patch.runId === parsed.data.runId && v.patch.patchId === parsed.data.patchId && v.hunk.index === parsed.data.hunk);
      if (found) return found;
    }
    return undefined;
  }
  const editor = vscode.window.activeTextEditor;
  const path = editor && deps.relativePath(editor.document.uri);
  if (!editor || path === undefined) return undefined;
  const line = editor.selection.active.line;
  return model.viewsOf(path).find((v) => line >= v.line && line < v.line + Math.max(1, v.hunk.newCore.length));
}

function fileViews(deps: ReviewCommandDeps, arg: unknown): HunkView[] {
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  const path = uri && deps.relativePath(uri);
  return path === undefined ? [] : [...deps.model.viewsOf(path)];
}

async function runViews(deps: ReviewCommandDeps, arg: unknown): Promise<HunkView[]> {
  const given = RunArg.safeParse(arg);
  const ids = deps.model.runIds();
  const runId = given.success
    ? given.data
    : ids.length <= 1
      ? ids[0]
      : (await vscode.window.showQuickPick(ids, { placeHolder: 'Which run’s changes?' }))?.toString();
  if (runId === undefined) return [];
  return deps.model.paths().flatMap((p) => deps.model.viewsOf(p).filter((v) => v.patch.runId === runId));
}

function undoMessage(outcome: UndoOutcome): string {
  const undone = `${outcome.undone} change${outcome.undone === 1 ? '' : 's'} undone`;
  return outcome.conflicts > 0 ? `${undone}; ${outcome.conflicts} edited since the agent wrote them: left as they are` : undone;
}

/** Next (+1) or previous (-1) hunk across files, from the cursor of the active editor; wraps. */
export function neighbour(deps: ReviewCommandDeps, direction: 1 | -1): { path: string; line: number } | undefined {
  const all = deps.model.paths().flatMap((path) => deps.model.viewsOf(path).map((v) => ({ path, line: v.line })));
  if (all.length === 0) return undefined;
  const editor = vscode.window.activeTextEditor;
  const here = editor ? { path: deps.relativePath(editor.document.uri) ?? '', line: editor.selection.active.line } : { path: '', line: -1 };
  const cmp = (a: { path: string; line: number }) => (a.path === here.path ? a.line - here.line : a.path < here.path ? -1 : 1);
  if (direction === 1) return all.find((a) => cmp(a) > 0) ?? all[0];
  return [...all].reverse().find((a) => cmp(a) < 0) ?? all[all.length - 1];
}

async function reveal(deps: ReviewCommandDeps, direction: 1 | -1): Promise<void> {
  const target = neighbour(deps, direction);
  const uri = target && deps.fileUri(target.path);
  if (!target || !uri) return void vscode.window.setStatusBarMessage('Agent Checkpoints: no agent change waits for review', 3000);
  const position = new vscode.Position(target.line, 0);
  const editor = await vscode.window.showTextDocument(uri, { selection: new vscode.Range(position, position), preview: false });
  editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

type Action = (arg: unknown) => Promise<string | undefined>;

function command(name: string, action: Action): vscode.Disposable {
  return vscode.commands.registerCommand(name, async (arg: unknown) => {
    try {
      const message = await action(arg);
      if (message) vscode.window.setStatusBarMessage(`Agent Checkpoints: ${message}`, 5000);
      return message;
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent Checkpoints: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  });
}

/** Keep / Undo per hunk, per file and per run, and next / previous change. Each returns its message. */
export function registerReviewCommands(deps: ReviewCommandDeps): vscode.Disposable[] {
  const none = 'no agent change under the cursor';
  const keep = async (views: HunkView[]) => `${await deps.actions.keep(views)} change(s) kept`;
  const undo = async (views: HunkView[]) => undoMessage(await deps.actions.undoAll(views));
  return [
    command(REVIEW_COMMANDS.keepHunk, async (arg) => {
      const view = hunkAt(deps, arg);
      return view ? keep([view]) : none;
    }),
    command(REVIEW_COMMANDS.undoHunk, async (arg) => {
      const view = hunkAt(deps, arg);
      return view ? undo([view]) : none;
    }),
    command(REVIEW_COMMANDS.keepFile, async (arg) => keep(fileViews(deps, arg))),
    command(REVIEW_COMMANDS.undoFile, async (arg) => undo(fileViews(deps, arg))),
    command(REVIEW_COMMANDS.keepRun, async (arg) => keep(await runViews(deps, arg))),
    command(REVIEW_COMMANDS.undoRun, async (arg) => undo(await runViews(deps, arg))),
    command(REVIEW_COMMANDS.next, async () => void (await reveal(deps, 1))),
    command(REVIEW_COMMANDS.previous, async () => void (await reveal(deps, -1))),
  ];
}
