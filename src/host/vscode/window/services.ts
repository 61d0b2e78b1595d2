import * as vscode from 'vscode';
import type { CheckpointStore } from '../../../core/store/contract';
import * as nodePath from 'node:path';
import { systemClock, type Log } from '../../../core/ports';
import type { FileCheckpointStore } from '../../../core/store/file/file-store';
import { commandLaunch, createAgentHost, type AgentHost, type AgentHostPorts, type CommandSettings } from '../../node/agent-host/index';
import { commandShell } from './command-shell';
import { nodeGitReader } from '../../node/git-facts';
import { nodeGitCommitter } from '../../node/git/committer';
import { folderKey, workspaceStoreDir } from '../../node/state-dir';
import { openFileStore, openStore, shownAddress, storeAddressOf } from '../../node/store-factory';
import { migrateRunsFrom, workspaceStorageSiblings } from '../../node/store-migrate';
import { AgentController, editorProviderSources } from '../run/agent-controller';
import { ApiKeys, keyInHostEnvironmentWarning } from './api-key';
import { boundedWorkspace } from './bounded-workspace';
import { InlineApprover } from '../run/approvals';
import { createRunExtensions } from '../run/lm/run-extensions';
import { ContextKeys } from './context-keys';
import { LiveWorkspace } from './live-workspace';
import { createOutputLog, redact } from './output-log';
import { SwitchablePrompts } from './prompts';
import { RestoreActions } from '../restore/restore-actions';
import { RunModel } from './run-model';
import { connectRunModel } from './model-inputs';
import { RunPresenter } from '../run/run-presenter';
import { readOneSetting, readSettings, SETTINGS_SECTION, type ExtensionSettings } from './settings';
import { CommandNetwork } from './command-network';
import { errorText } from '../../../core/error-text';
import { counted } from '../../../words/words';
import { EditorDiagnostics } from '../run/editor-diagnostics';

export const LOG_CHANNEL_NAME = 'Agent Checkpoints';
const LOG_TAIL_LINES = 2000;

/** Everything the commands and views share, built once per activation. */
export interface Services {
  readonly context: vscode.ExtensionContext;
  readonly storagePath: string;
  /** The run store: the file store of this workspace, or the server of `agentCheckpoints.store`. */
  readonly store: CheckpointStore;
  readonly workspace: LiveWorkspace;
  readonly channel: vscode.LogOutputChannel;
  readonly log: Log;
  /** The lines written to the channel (already redacted), newest last. */
  readonly logTail: string[];
  readonly prompts: SwitchablePrompts;
  /** Calls waiting for a decision, shown in the Timeline. */
  readonly approvals: InlineApprover;
  readonly apiKeys: ApiKeys;
  /** The commands' network proxy of the window (the allowlist, the hosts the person allows from the Timeline). */
  readonly network: CommandNetwork;
  readonly controller: AgentController;
  readonly restore: RestoreActions;
  readonly keys: ContextKeys;
  /** The window's run model: every run event, the listing with its facts, the selected run. */
  readonly model: RunModel;
  readonly presenter: RunPresenter;
  /** Settles once runs written where the store used to be are moved in (never rejects). */
  readonly storeReady: Promise<void>;
  /** `vscode.workspace.isTrusted`, read at each check. */
  isTrusted(): boolean;
}

/**
 * The workspace's one store, the same for every window, extension host, reload and reconnect of
 * it, and for the CLI: `<global storage>/workspaces/<key of its folders>` (state-dir.ts).
 */
export function storageRootOf(context: vscode.ExtensionContext): vscode.Uri {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) =>
    folderKey({ scheme: f.uri.scheme, fsPath: f.uri.fsPath, uri: f.uri.toString() }),
  );
  return vscode.Uri.file(workspaceStoreDir(context.globalStorageUri.fsPath, folders));
}

/** Where runs were written before that rule: this window's workspace storage and its `-N` siblings, or the global storage itself. */
async function legacyStores(context: vscode.ExtensionContext, store: FileCheckpointStore): Promise<string[]> {
  if (!context.storageUri) return [context.globalStorageUri.fsPath];
  return workspaceStorageSiblings(store.fs, context.storageUri.fsPath);
}

async function moveLegacyRuns(context: vscode.ExtensionContext, store: FileCheckpointStore, log: Log): Promise<void> {
  for (const from of await legacyStores(context, store).catch(() => [] as string[])) {
    try {
      const result = await migrateRunsFrom(from, store);
      if (result.moved.length > 0)
        log.log('info', `moved ${counted(result.moved.length, 'run')} from ${from} into ${store.root}: ${result.moved.join(', ')}`);
      for (const left of result.left) log.log('warn', `run ${left.runId} left in ${left.from}: ${left.reason}`);
    } catch (error) {
      log.log('warn', `runs in ${from} not moved: ${errorText(error)}`);
    }
  }
}

function teeLog(channel: vscode.LogOutputChannel, tail: string[], secrets: () => readonly string[]): Log {
  const base = createOutputLog(channel, secrets);
  return {
    log(level, message, data) {
      base.log(level, message, data);
      tail.push(redact(`[${level}] ${message}${data ? ` ${JSON.stringify(data)}` : ''}`, secrets()));
      if (tail.length > LOG_TAIL_LINES) tail.splice(0, tail.length - LOG_TAIL_LINES);
    },
  };
}

/** The user's settings that shape a command's launch, read at each command. */
function commandSettingsNow(): CommandSettings {
  const settings = readSettings();
  return {
    sandbox: settings.sandbox,
    network: settings.commandNetwork,
    passEnv: settings.commandEnvironment,
    protectedPaths: settings.protectedPaths,
    homePaths: settings.commandHomePaths,
  };
}

/**
 * The window's agent host: the launch of its commands and MCP servers (the editor's user folder and
 * storage never visible to them), the tools a session adds (MCP servers, VS Code's), the provider the settings name.
 */
function agentHostOf(
  context: vscode.ExtensionContext,
  window: { roots: readonly string[]; storeAddress: string; network: CommandNetwork; apiKeys: ApiKeys; prompts: SwitchablePrompts },
  ports: Omit<AgentHostPorts, 'commands' | 'providers' | 'extraTools'> & { settings: () => ExtensionSettings },
): AgentHost {
  const { roots, apiKeys, network } = window;
  const { log, settings, ...agentPorts } = ports;
  const launch = commandLaunch({
    roots,
    store: storeAddressOf(window.storeAddress),
    // The editor's user folder, the extension's storage, and the file store's folder (hidden with a PostgreSQL store too: runs moved from it, the fallback).
    hidden: [
      nodePath.dirname(nodePath.dirname(context.globalStorageUri.fsPath)),
      context.globalStorageUri.fsPath,
      storageRootOf(context).fsPath,
    ],
    settings: commandSettingsNow,
    proxy: () => network.current(),
    shell: commandShell,
    secrets: () => apiKeys.known(),
    warn: (message) => {
      log.log('warn', message);
      void vscode.window.showWarningMessage(`Agent Checkpoints: ${message}`);
    },
  });
  // One runner per window: it tells once which variables it withheld.
  const commands = launch.runner();
  const extensions = createRunExtensions({ state: context.workspaceState, prompts: window.prompts, log, launch });
  const resolveFile = (path: string): vscode.Uri =>
    vscode.Uri.file(nodePath.isAbsolute(path) || roots[0] === undefined ? path : nodePath.join(roots[0], path));
  return createAgentHost({
    ...agentPorts,
    log,
    commands: () => commands,
    providers: editorProviderSources({ apiKeys, settings, resolveFile, languageModels: () => extensions.provider() }),
    gitCommits: nodeGitCommitter(),
    extraTools: () => extensions.tools(),
  });
}

/**
 * The store setting, read alone: a wrong value of it (or of any other setting) must not stop the
 * window from opening, or the Timeline stays blank with no word why. A wrong one is said, with the
 * way to fix it, and this workspace's own file store serves until then.
 */
function storeAddressSetting(log: Log): string {
  const { value, problem } = readOneSetting('store');
  if (problem === undefined) return value;
  const words = `${problem}. Runs are kept in this workspace's own store until it is fixed (applies at the next window reload).`;
  log.log('warn', words);
  void vscode.window.showErrorMessage(`Agent Checkpoints: ${words}`, OPEN_SETTINGS).then((choice) => {
    if (choice === OPEN_SETTINGS) void vscode.commands.executeCommand('workbench.action.openSettings', `${SETTINGS_SECTION}.store`);
  });
  return '';
}
const OPEN_SETTINGS = 'Open Settings';

export function createServices(context: vscode.ExtensionContext): Services {
  const storagePath = storageRootOf(context).fsPath;
  const channel = vscode.window.createOutputChannel(LOG_CHANNEL_NAME, { log: true });
  const apiKeys = new ApiKeys(context.secrets);
  const logTail: string[] = [];
  const log = teeLog(channel, logTail, () => apiKeys.known());
  const fileStore = openFileStore(storagePath);
  const address = storeAddressSetting(log);
  // A team's PostgreSQL store (user settings only; a change applies at the next window reload).
  const backing: CheckpointStore = address !== '' ? openStore(address) : fileStore;
  if (address !== '') log.log('info', `run store: ${shownAddress(address)}`);
  const keyWarning = keyInHostEnvironmentWarning(process.env);
  if (keyWarning !== undefined) log.log('warn', keyWarning);
  const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const workspace = new LiveWorkspace(roots, storagePath, log);
  // The store's address: a PostgreSQL server is refused by the commands' proxy, a socket folder it names hidden.
  const storeAddress = address !== '' ? address : storagePath;
  const storeReady = moveLegacyRuns(context, fileStore, log);
  // Every writer of the window writes through the model's store: what it appends is published.
  const model = new RunModel(backing, storeReady, context.workspaceState);
  const store = model.store;
  const prompts = new SwitchablePrompts();
  const network = new CommandNetwork({
    store: storeAddress,
    log,
    prompts,
    memory: context.globalState,
    workspace: roots.map((root) => folderKey({ scheme: 'file', fsPath: root, uri: root })).join('\n'),
  });
  network.current();
  const approvals = new InlineApprover(prompts);
  const settings = (): ExtensionSettings => readSettings((message) => log.log('warn', message));
  const host = agentHostOf(
    context,
    { roots, storeAddress, network, apiKeys, prompts },
    {
      store,
      workspace: boundedWorkspace(workspace),
      approver: approvals,
      git: nodeGitReader,
      clock: systemClock,
      log,
      settings,
      diagnostics: new EditorDiagnostics(workspace.paths),
    },
  );
  const controller = new AgentController({ store, clock: systemClock, log, settings, host, allowlist: () => network.allowlist() });
  const restore = new RestoreActions({ store, workspace, clock: systemClock, log, isRunning: (runId) => controller.isRunning(runId) });
  connectRunModel(model, workspace.paths, {
    onEvent: controller.onEvent,
    onDidStart: controller.onDidStart,
    onDidFinish: controller.onDidFinish,
    approvalsChanged: approvals.onDidChange,
  });
  const keys = new ContextKeys(model, log, () => controller.current?.runId);
  const presenter = new RunPresenter(controller, approvals);
  context.subscriptions.push(model, keys, channel, controller, presenter, approvals, network);
  const services: Services = {
    context,
    storagePath,
    store,
    workspace,
    channel,
    log,
    logTail,
    prompts,
    approvals,
    apiKeys,
    network,
    controller,
    restore,
    keys,
    model,
    presenter,
    storeReady,
    isTrusted: () => vscode.workspace.isTrusted,
  };
  return services;
}
