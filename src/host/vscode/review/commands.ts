import * as vscode from 'vscode';
import type { HunkView } from '../../../core/patches/review';
import type { ReviewActions, UndoOutcome } from './actions';
import { REVIEW_COMMANDS } from './ids';
import type { ReviewModel } from './model';
import type { Prompts } from '../window/prompts';
import type { CommandHandlers } from '../commands/command-table';
import type { HunkArg } from '../commands/command-args';

type ReviewCommandId = (typeof REVIEW_COMMANDS)[keyof typeof REVIEW_COMMANDS];

export interface ReviewCommandDeps {
  readonly model: ReviewModel;
  readonly actions: ReviewActions;
  /** Asks which run and confirms an Undo (scripted in host tests). */
  readonly prompts: Prompts;
  /** The task of a run, to name it in the question. */
  taskOf(runId: string): Promise<string | undefined>;
  relativePath(uri: vscode.Uri): string | undefined;
  fileUri(path: string): vscode.Uri | undefined;
}

/** The hunk a command names, or the one under the cursor of the active editor. */
export function hunkAt(deps: ReviewCommandDeps, arg: HunkArg | undefined): HunkView | undefined {
  const model = deps.model;
  if (arg !== undefined) {
    for (const path of model.paths()) {
      const found = model
        .viewsOf(path)
        .find((v) => v.patch.runId === arg.runId && v.patch.patchId === arg.patchId && v.hunk.index === arg.hunk);
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

function changes(n: number): string {
  return `${n} change${n === 1 ? '' : 's'}`;
}

/** The run a bulk command acts on: the one it names, or the one the person picks (always asked from the palette). */
async function pickRun(deps: ReviewCommandDeps, runId: string | undefined, verb: 'Keep' | 'Undo'): Promise<string | undefined> {
  if (runId !== undefined) return runId;
  const items = await Promise.all(
    deps.model.runIds().map(async (runId) => ({
      label: ((await deps.taskOf(runId)) ?? runId).split('\n')[0] || runId,
      description: `${changes(deps.model.count(runId))} to review`,
      detail: runId,
      runId,
    })),
  );
  if (items.length === 0) return undefined;
  const title = `${verb} all the agent's changes of which run?`;
  return (await deps.prompts.quickPick(items, { title, placeHolder: 'Runs with changes waiting for review' }))?.runId;
}

async function runViews(deps: ReviewCommandDeps, given: string | undefined, verb: 'Keep' | 'Undo'): Promise<HunkView[]> {
  const runId = await pickRun(deps, given, verb);
  if (runId === undefined) return [];
  const views = deps.model.paths().flatMap((p) => deps.model.viewsOf(p).filter((v) => v.patch.runId === runId));
  if (verb === 'Keep' || views.length === 0) return views;
  const task = ((await deps.taskOf(runId)) ?? runId).split('\n')[0];
  const files = new Set(views.map((v) => v.patch.path)).size;
  const choice = await deps.prompts.message(
    'warning',
    `Undo ${changes(views.length)} of "${task}" in ${files} file${files === 1 ? '' : 's'}?`,
    {
      modal: true,
      detail: 'The files go back to what they were before the agent wrote them; lines you edited since are left as they are.',
    },
    UNDO_CONFIRM,
  );
  return choice === UNDO_CONFIRM ? views : [];
}

export const UNDO_CONFIRM = 'Undo Changes';

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

function command<A>(action: (arg: A) => Promise<string | undefined>): (arg: A) => Promise<string | undefined> {
  return async (arg: A) => {
    try {
      const message = await action(arg);
      if (message) vscode.window.setStatusBarMessage(`Agent Checkpoints: ${message}`, 5000);
      return message;
    } catch (error) {
      void vscode.window.showErrorMessage(`Agent Checkpoints: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  };
}

/** Keep / Undo per hunk, per file and per run, and next / previous change. Each returns its message. */
export function reviewCommands(deps: ReviewCommandDeps): CommandHandlers<ReviewCommandId> {
  const none = 'no agent change under the cursor';
  const keep = async (views: HunkView[]) => `${changes(await deps.actions.keep(views))} kept`;
  const undo = async (views: HunkView[]) => undoMessage(await deps.actions.undoAll(views));
  return {
    [REVIEW_COMMANDS.keepHunk]: command(async (arg) => {
      const view = hunkAt(deps, arg);
      return view ? keep([view]) : none;
    }),
    [REVIEW_COMMANDS.undoHunk]: command(async (arg) => {
      const view = hunkAt(deps, arg);
      return view ? undo([view]) : none;
    }),
    [REVIEW_COMMANDS.keepFile]: command(async (arg) => keep(fileViews(deps, arg))),
    [REVIEW_COMMANDS.undoFile]: command(async (arg) => undo(fileViews(deps, arg))),
    [REVIEW_COMMANDS.keepRun]: command(async (arg) => {
      const views = await runViews(deps, arg, 'Keep');
      return views.length > 0 ? keep(views) : undefined;
    }),
    [REVIEW_COMMANDS.undoRun]: command(async (arg) => {
      const views = await runViews(deps, arg, 'Undo');
      return views.length > 0 ? undo(views) : undefined;
    }),
    [REVIEW_COMMANDS.next]: command(async () => void (await reveal(deps, 1))),
    [REVIEW_COMMANDS.previous]: command(async () => void (await reveal(deps, -1))),
  };
}
