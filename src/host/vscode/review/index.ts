import * as vscode from 'vscode';
import { decodeText } from '../../../core/patches/hash';
import type { Services } from '../window/services';
import { ReviewCodeLensProvider } from './code-lens';
import { fileUriOf, workspacePathOf } from '../window/workspace-path';
import { ReviewActions } from './actions';
import { reviewCommands } from './commands';
import type { Feature, Register } from '../window/feature';
import { ReviewEditors } from './editors';
import { ReviewMarks, type AppliedMarks } from './marks';
import { ReviewModel } from './model';

import { REVIEW_COMMANDS } from './ids';

export { REVIEW_COMMANDS };
export type { AppliedMarks } from './marks';

export interface ReviewRegistration extends Feature<(typeof REVIEW_COMMANDS)[keyof typeof REVIEW_COMMANDS]> {
  /** Hunks waiting for Keep or Undo, of one run (the Timeline's "N changes to review") or all. */
  count(runId?: string): number;
  /** Fires when what waits for review may have changed. */
  readonly onDidChange: vscode.Event<unknown>;
  /** Drops everything and re-derives the review state from the store and the live text. */
  reload(): Promise<void>;
  /** Settles once pending reads of the store are done. */
  settled(): Promise<void>;
  /** The marks last set on the editors of a document. */
  marksOf(uri: vscode.Uri): AppliedMarks | undefined;
}

function createModel(s: Services): ReviewModel {
  return new ReviewModel({
    source: {
      listRuns: () => s.model.listRuns(),
      readRun: (runId) => s.store.readRun(runId, { intactPart: true }),
      getBlob: (hash) => s.store.getBlob(hash),
    },
    readLive: async (path) => {
      const live = await s.workspace.read(path);
      return live === null ? undefined : decodeText(live.bytes)?.text;
    },
    log: (message) => s.log.log('warn', message),
  });
}

function createActions(s: Services, model: ReviewModel): ReviewActions {
  return new ReviewActions({
    model,
    // The light path; the run model then brings the records to the review (and the Timeline, the keys).
    appendToRun: async (runId, records) => {
      await s.model.appendDecisions(runId, records);
    },
    checkWritable: (runId) => {
      if (s.controller.isRunning(runId)) throw new Error(`run ${runId} is still running: keep or undo its changes once it stops`);
    },
    // An undo edits a file: a restore around the edit, under the run's writer (write-ahead).
    undoHunks: (runId, path, hunks, transform, mode) => s.restore.undoHunks(runId, path, hunks, transform, mode),
    fileUri: (path) => fileUriOf(s.workspace.paths, path),
  });
}

/**
 * Inline review of agent edits: marks, CodeLens, Keep / Undo, navigation, the count. It follows
 * the window's run model, and tells it what waits per run (the Timeline shows that from there).
 */
export const register: Register<ReviewRegistration> = (s) => {
  const pathOf = (uri: vscode.Uri) => workspacePathOf(s.workspace.paths, uri);
  const model = createModel(s);
  const marks = new ReviewMarks(s.context.extensionUri);
  const editors = new ReviewEditors(model, marks, pathOf, s.workspace);
  // The lens names the run a change is of: tasks read once per change of the review set.
  const tasks = new Map<string, string>();
  const lensChanged = new vscode.EventEmitter<void>();
  const readTasks = async () => {
    for (const run of await s.model.listRuns()) tasks.set(run.runId, run.task.split('\n')[0] ?? '');
    lensChanged.fire();
  };
  const lenses = new ReviewCodeLensProvider({
    viewsOf: (document) => {
      const path = pathOf(document.uri);
      return path === undefined ? [] : model.viewsOf(path);
    },
    onDidChange: lensChanged.event,
    taskOf: (runId) => tasks.get(runId),
  });
  const actions = createActions(s, model);
  const disposables: vscode.Disposable[] = [
    model,
    marks,
    lenses,
    lensChanged,
    model.onDidChange(() => {
      s.model.setReviewCounts(model.counts());
      lensChanged.fire();
      if (model.runIds().some((id) => !tasks.has(id))) void readTasks().catch(() => undefined);
    }),
    editors,
    model.onDidChange((paths) => editors.paint(paths)),
    vscode.languages.registerCodeLensProvider([{ scheme: 'file' }, { scheme: 'vscode-remote' }], lenses),
    vscode.window.onDidChangeVisibleTextEditors(() => editors.shown()),
    vscode.window.onDidChangeActiveTextEditor(() => editors.activeChanged()),
    vscode.workspace.onDidChangeTextDocument((e) => editors.typed(e.document)),
    s.model.onDidChange((change) => {
      if (change.kind === 'records') editors.recordsChanged(change.runId, change.records);
      else if (change.kind === 'runs') void model.reloadAll();
      else if (change.kind === 'live') void editors.liveChanged(change.paths);
    }),
  ];
  const commands = reviewCommands({
    model,
    actions,
    prompts: s.prompts,
    taskOf: async (runId) => (await s.model.listRuns()).find((r) => r.runId === runId)?.task,
    relativePath: pathOf,
    fileUri: (path) => fileUriOf(s.workspace.paths, path),
  });
  void model.reloadAll().then(() => editors.shown());
  return {
    count: (runId) => model.count(runId),
    onDidChange: model.onDidChange,
    reload: async () => {
      model.reset();
      await model.reloadAll(true);
      editors.shown();
    },
    settled: () => model.settled(),
    marksOf: (uri) => marks.appliedTo(uri),
    commands,
    dispose: () => disposables.forEach((d) => d.dispose()),
  };
};
