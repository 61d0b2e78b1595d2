import * as vscode from 'vscode';
import type { RuntimeEvent } from '../../../core/runtime';
import type { WorkspacePaths } from '../../node/path-rules';
import { workspacePathOf } from './workspace-path';
import type { RunModel } from './run-model';

/** The sources of the window's transient events: the controller of this window's run, the approvals. */
export interface TransientSources {
  readonly onEvent: vscode.Event<RuntimeEvent>;
  readonly onDidStart: vscode.Event<{ readonly runId: string }>;
  readonly onDidFinish: vscode.Event<{ readonly run: { readonly runId: string } }>;
  readonly approvalsChanged: vscode.Event<unknown>;
}

/**
 * Connects the window's inputs to its run model, which holds them from then on: the store's
 * notices, the editors' and the file system's live changes (named by the one conversion of a
 * URI to a workspace path), the runtime's streamed text and save points, the approvals. A run
 * started here becomes the selected run.
 */
export function connectRunModel(model: RunModel, paths: WorkspacePaths, sources: TransientSources): void {
  const live = (uri: vscode.Uri) => {
    const path = workspacePathOf(paths, uri);
    if (path !== undefined) model.liveChanged(path);
  };
  const folders = vscode.workspace.workspaceFolders ?? [];
  const watchers = folders.map((folder) => vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '**/*')));
  model.own(
    ...watchers,
    ...watchers.flatMap((w) => [w.onDidChange(live), w.onDidCreate(live), w.onDidDelete(live)]),
    vscode.workspace.onDidChangeTextDocument((e) => live(e.document.uri)),
    vscode.workspace.onDidSaveTextDocument((doc) => live(doc.uri)),
    vscode.workspace.onDidCloseTextDocument((doc) => live(doc.uri)),
    sources.onEvent((event) => model.runtimeEvent(event)),
    sources.onDidStart((run) => model.select(run.runId)),
    sources.onDidFinish(({ run }) => model.runEnded(run.runId)),
    sources.approvalsChanged(() => model.approvalsChanged()),
  );
  model.watch();
}
