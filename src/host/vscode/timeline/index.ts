import type { CommandHandler, CommandHandlers, CommandId } from '../commands/command-table';
import type { Feature, Register } from '../window/feature';
import { ExtensionTimelineBackend } from './extension-backend';
import { ExtensionConversation } from './extension-conversation';
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import type { ConversationBackend, TimelineBackend } from './backend';
import { BEFORE_SCHEME, BeforeContentProvider } from './beforeContent';
import { PATCH_COMMANDS } from '../review/patch-commands';
import { patchArgsOf, trackDiffContext, type PatchCommandArgs } from './commands';
import { openPatchDiff } from './diff';
import { COMPARE_COMMAND } from '../restore/compare/index';
import { createTimelinePanel, panelAsView, TIMELINE_PANEL_TYPE } from './panel';
import { SavedState } from '../../../webview/state';
import { TIMELINE_VIEW_ID, TimelineViewProvider } from './provider';
import { RequestHandler } from './requests';
import { TimelineSync } from './sync';
import { RunFolds } from './run-folds';
import type { Patch } from '../../../core/patches/schema';
import { counted } from '../../../words/words';
import { errorText } from '../../../core/error-text';

export type { ConversationBackend, RestorePlan, RollbackResult, StreamChunk, TimelineBackend, TimelineChange } from './backend';
export { BEFORE_SCHEME, BeforeContentProvider, beforeUri } from './beforeContent';
export { PATCH_COMMANDS } from '../review/patch-commands';
export { TIMELINE_VIEW_ID, TimelineViewProvider } from './provider';
export { RequestHandler } from './requests';
export { TimelineSync } from './sync';

export interface TimelineOptions {
  /** Where refused messages and failures are reported (the extension's output channel). */
  readonly log?: (message: string) => void;
  readonly debounceMs?: number;
  /** Hunks of a run waiting for review (the run model's, as the review tells it): shown on the run's row. */
  readonly reviewCount?: (runId: string) => number;
}

/** Opens the Timeline in an editor tab (or brings the open one forward). */
export const OPEN_IN_EDITOR_COMMAND = 'agentCheckpoints.timeline.openInEditor' satisfies CommandId;

export interface TimelineRegistration extends vscode.Disposable {
  /** Resolves when the view is first shown and its webview set up. */
  readonly whenResolved: Promise<void>;
  readonly provider: TimelineViewProvider;
  /** The patch commands and Open in Editor: registered with every other command by commands.ts. */
  readonly commands: CommandHandlers<TimelineCommandId>;
}

type TimelineCommandId = typeof OPEN_IN_EDITOR_COMMAND | (typeof PATCH_COMMANDS)[keyof typeof PATCH_COMMANDS];

/** The Timeline view, the before-content documents and the patch commands (the review has the CodeLens). Every surface follows the run model through `backend`. */
export function registerTimeline(
  context: vscode.ExtensionContext,
  backend: TimelineBackend,
  conversation: ConversationBackend,
  options: TimelineOptions = {},
): TimelineRegistration {
  const log = options.log ?? ((message: string) => console.error(message));
  const reviewCount = options.reviewCount;
  // Each surface (the side bar view, an editor tab) has its own provider and record of what it sent.
  const compare = async (runId: string, otherRunId: string) =>
    (await vscode.commands.executeCommand<string | undefined>(COMPARE_COMMAND, { runId, otherRunId })) ?? 'Not compared.';
  // One fold per run for the window: the side bar view and every editor tab read the same.
  const folds = new RunFolds((runId) => backend.readRun(runId));
  const surface = () => {
    const source = {
      listRuns: () => backend.listRuns(),
      readRun: (runId: string) => backend.readRun(runId),
      liveStates: (patches: readonly Patch[]) => backend.liveStates(patches),
      ...(reviewCount ? { reviewCount } : {}),
    };
    const sync = new TimelineSync(source, folds);
    const openDiff = async (runId: string, patchId: string) => {
      const patch = await sync.findPatch(runId, patchId);
      if (!patch) throw new Error(`Patch ${patchId} of run ${runId} not found`);
      await openPatchDiff(patch, backend.fileUri(patch.path));
    };
    const requests = new RequestHandler({
      backend,
      conversation,
      state: (runId) => sync.state(runId),
      openDiff,
      compare,
      newId: randomUUID,
    });
    return {
      sync,
      openDiff,
      provider: new TimelineViewProvider(context.extensionUri, sync, requests, log, options.debounceMs, conversation, backend),
    };
  };
  const { sync, openDiff, provider } = surface();
  const providers = new Set<TimelineViewProvider>([provider]);
  let tab: vscode.WebviewPanel | undefined;
  /** Drives an editor tab (a new one, or one VS Code revives after a reload) with a provider of its own. */
  const adopt = (panel: vscode.WebviewPanel) => {
    const own = surface().provider;
    providers.add(own);
    tab = panel;
    panel.onDidDispose(() => {
      providers.delete(own);
      own.dispose();
      if (tab === panel) tab = undefined;
    });
    own.resolveWebviewView(panelAsView(panel));
  };
  const openInEditor = () => (tab ? tab.reveal() : adopt(createTimelinePanel(context.extensionUri)));
  const revive = (panel: vscode.WebviewPanel, state: unknown) => {
    // The saved state comes back from the webview: untrusted. The webview parses it again itself.
    if (state !== undefined && !SavedState.safeParse(state).success) log("the editor tab's saved state is not valid; it starts afresh");
    if (tab) panel.dispose();
    else adopt(panel);
  };
  const whenResolved = new Promise<void>((resolve) => {
    const once = provider.onDidResolve(() => {
      once.dispose();
      resolve();
    });
  });

  const patchCommand =
    (
      action: (args: PatchCommandArgs) => Promise<string | undefined>,
    ): CommandHandler<(typeof PATCH_COMMANDS)[keyof typeof PATCH_COMMANDS]> =>
    async (arg) => {
      const args = patchArgsOf(arg);
      if (!args)
        return void vscode.window.showWarningMessage('Agent Checkpoints: open a patch diff or pick a patch in the Timeline first.');
      try {
        const message = await action(args);
        if (message) vscode.window.setStatusBarMessage(`Agent Checkpoints: ${message}`, 5000);
      } catch (error) {
        void vscode.window.showErrorMessage(`Agent Checkpoints: ${errorText(error)}`);
      }
    };

  const disposables: vscode.Disposable[] = [
    provider,
    vscode.window.registerWebviewViewProvider(TIMELINE_VIEW_ID, provider),
    vscode.workspace.registerTextDocumentContentProvider(
      BEFORE_SCHEME,
      new BeforeContentProvider({ findPatch: (r, p) => sync.findPatch(r, p), readBlob: (h) => backend.readBlob(h) }),
    ),
    backend.onDidChange((change) => providers.forEach((p) => p.change(change))),
    backend.onDidSelect((runId) => providers.forEach((p) => p.selected(runId))),
    ...(backend.onDidChangeKey ? [backend.onDidChangeKey(() => providers.forEach((p) => p.keyChanged()))] : []),
    conversation.onDidStream((chunk) => providers.forEach((p) => p.stream(chunk))),
    conversation.onDidChangeApprovals(() => providers.forEach((p) => p.approvalsChanged())),
    conversation.onDidRequestReveal(() => provider.reveal()),
    // An editor tab open when the window closed or reloaded comes back (activation: onWebviewPanel).
    vscode.window.registerWebviewPanelSerializer(TIMELINE_PANEL_TYPE, {
      deserializeWebviewPanel: async (panel, state) => revive(panel, state),
    }),
    { dispose: () => tab?.dispose() },
    trackDiffContext(),
  ];
  const commands: CommandHandlers<TimelineCommandId> = {
    [OPEN_IN_EDITOR_COMMAND]: openInEditor,
    [PATCH_COMMANDS.openDiff]: patchCommand(async ({ runId, patchId }) => {
      await openDiff(runId, patchId);
      return undefined;
    }),
    [PATCH_COMMANDS.acceptPatch]: patchCommand(async ({ runId, patchId }) => {
      await backend.accept(runId, patchId);
      return 'patch accepted';
    }),
    [PATCH_COMMANDS.rollbackPatch]: patchCommand(async ({ runId, patchId }) => {
      const result = await backend.rollbackPatch(runId, patchId);
      return `rolled back ${counted(result.revertedHunks, 'hunk')}${result.conflictHunks > 0 ? `, ${result.conflictHunks} in conflict left alone` : ''}`;
    }),
  };
  context.subscriptions.push(...disposables);
  return { whenResolved, provider, commands, dispose: () => disposables.forEach((d) => d.dispose()) };
}

export interface TimelineFeature extends Feature<TimelineCommandId> {
  /** Resolves when the view is first shown and its webview set up. */
  readonly whenResolved: Promise<void>;
  /** The window's Timeline backend (the test API reads runs through it). */
  readonly backend: TimelineBackend;
}

/** The Timeline of the window: its backend and conversation over the run model, the view, and the approvals shown in it. */
export const register: Register<TimelineFeature> = (s) => {
  const backend = new ExtensionTimelineBackend(s);
  const conversation = new ExtensionConversation(s);
  const timeline = registerTimeline(s.context, backend, conversation, {
    log: (message) => s.log.log('warn', `timeline: ${message}`),
    reviewCount: (runId) => s.model.reviewCount(runId),
  });
  s.approvals.surface = timeline.provider;
  return {
    whenResolved: timeline.whenResolved,
    backend,
    commands: timeline.commands,
    dispose: () => {
      conversation.dispose();
      timeline.dispose();
    },
  };
};
