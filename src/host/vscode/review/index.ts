import * as vscode from 'vscode';
import { decodeText } from '../../../core/patches/hash';
import type { NewRecord } from '../../../core/store/records';
import type { Services } from '../services';
import type { TimelineBackend } from '../timeline/backend';
import { ReviewCodeLensProvider } from '../timeline/codeLens';
import { ReviewActions } from './actions';
import { registerReviewCommands } from './commands';
import { REVIEW_CONTEXT } from './ids';
import { ReviewMarks, type AppliedMarks } from './marks';
import { ReviewModel } from './model';

export { REVIEW_COMMANDS } from './ids';
export type { AppliedMarks } from './marks';

/** Typing is coalesced this long before a file's hunks are located again. */
const TYPING_MS = 15;

export interface ReviewRegistration extends vscode.Disposable {
  /** Hunks waiting for Keep or Undo, of one run (the Timeline's "N changes to review") or all. */
  count(runId?: string): number;
  /** Drops everything and re-derives the review state from the store and the live text. */
  reload(): Promise<void>;
  /** Settles once pending reads of the store are done. */
  settled(): Promise<void>;
  /** The marks last set on the editors of a document. */
  marksOf(uri: vscode.Uri): AppliedMarks | undefined;
}

export interface ReviewHost {
  relativePath(uri: vscode.Uri): string | undefined;
}

async function appendToRun(s: Services, runId: string, records: NewRecord[]): Promise<void> {
  const writer = await s.store.openWriter(runId);
  try {
    await writer.append(records);
  } finally {
    await writer.close().catch(() => undefined);
  }
}

function statusItem(): vscode.StatusBarItem {
  const item = vscode.window.createStatusBarItem('agentCheckpoints.review', vscode.StatusBarAlignment.Left, 50);
  item.name = 'Agent changes to review';
  item.command = 'agentCheckpoints.review.next';
  item.tooltip = 'Agent changes waiting for Keep or Undo: go to the next one';
  return item;
}

/** Inline review of agent edits: marks, CodeLens, Keep / Undo, navigation, the count. */
export function registerReview(s: Services, backend: TimelineBackend, host: ReviewHost): ReviewRegistration {
  const log = (message: string) => s.log.log('warn', message);
  const model = new ReviewModel({
    source: {
      listRuns: () => s.storeReady.then(() => s.store.listRuns()),
      readRun: (runId) => s.store.readRun(runId, { intactPart: true }),
      readRecords: (runId) => s.store.readRecords(runId),
      getBlob: (hash) => s.store.getBlob(hash),
    },
    readLive: async (path) => {
      const live = await s.workspace.read(path);
      return live === null ? undefined : decodeText(live.bytes)?.text;
    },
    log,
  });
  const marks = new ReviewMarks(s.context.extensionUri);
  const actions = new ReviewActions({
    model,
    appendToRun: (runId, records) => appendToRun(s, runId, records),
    checkWritable: (runId) => {
      if (s.controller.isRunning(runId)) throw new Error(`run ${runId} is still running: keep or undo its changes once it stops`);
    },
    fileUri: (path) => backend.fileUri(path),
  });
  const pathOf = (uri: vscode.Uri) => host.relativePath(uri);
  const lenses = new ReviewCodeLensProvider({
    viewsOf: (document) => {
      const path = pathOf(document.uri);
      return path === undefined ? [] : model.viewsOf(path);
    },
    onDidChange: model.onDidChange,
  });
  const status = statusItem();
  const typing = new Map<string, NodeJS.Timeout>();

  const paint = (paths?: readonly string[]) => {
    for (const editor of vscode.window.visibleTextEditors) {
      const path = pathOf(editor.document.uri);
      if (path !== undefined && (paths === undefined || paths.includes(path))) marks.apply(editor, model.viewsOf(path));
    }
    const n = model.count();
    status.text = `$(diff-multiple) ${n} change${n === 1 ? '' : 's'} to review`;
    if (n > 0) status.show();
    else status.hide();
    void vscode.commands.executeCommand('setContext', REVIEW_CONTEXT.hasChanges, n > 0);
    activeContext();
  };
  const activeContext = () => {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const path = uri && pathOf(uri);
    void vscode.commands.executeCommand(
      'setContext',
      REVIEW_CONTEXT.activeHasChanges,
      path !== undefined && model.viewsOf(path).length > 0,
    );
  };
  const showEditors = () => {
    for (const editor of vscode.window.visibleTextEditors) {
      const path = pathOf(editor.document.uri);
      if (path !== undefined && model.hasPending(path)) model.update(path, editor.document.getText());
    }
    paint();
  };
  const typed = (document: vscode.TextDocument) => {
    const path = pathOf(document.uri);
    if (path === undefined || !model.hasPending(path) || typing.has(path)) return;
    typing.set(
      path,
      setTimeout(() => {
        typing.delete(path);
        model.update(path, document.getText());
      }, TYPING_MS),
    );
  };
  const liveChanged = async (paths: readonly string[]) => {
    for (const path of paths) {
      if (!model.hasPending(path)) continue;
      const live = await s.workspace.read(path).catch(() => null);
      model.update(path, live === null ? '' : (decodeText(live.bytes)?.text ?? ''));
    }
  };

  const disposables: vscode.Disposable[] = [
    model,
    marks,
    lenses,
    status,
    model.onDidChange((paths) => paint(paths)),
    vscode.languages.registerCodeLensProvider([{ scheme: 'file' }, { scheme: 'vscode-remote' }], lenses),
    vscode.window.onDidChangeVisibleTextEditors(showEditors),
    vscode.window.onDidChangeActiveTextEditor(activeContext),
    vscode.workspace.onDidChangeTextDocument((e) => typed(e.document)),
    backend.onDidChange((change) => {
      if (change.kind === 'records') void model.reloadRun(change.runId);
      else if (change.kind === 'runs') void model.reloadAll();
      else void liveChanged(change.paths);
    }),
    ...registerReviewCommands({ model, actions, relativePath: pathOf, fileUri: (path) => backend.fileUri(path) }),
  ];
  void model.reloadAll().then(showEditors);
  return {
    count: (runId) => model.count(runId),
    reload: async () => {
      model.reset();
      await model.reloadAll();
      showEditors();
    },
    settled: () => model.settled(),
    marksOf: (uri) => marks.appliedTo(uri),
    dispose: () => {
      for (const t of typing.values()) clearTimeout(t);
      for (const d of disposables) d.dispose();
    },
  };
}
