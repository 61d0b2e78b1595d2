import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_MODEL } from '../../core/model/models';
import type { MessageParam } from '../../core/model/messages';
import type { ModelProvider } from '../../core/model/provider';
import { ReplayScriptError } from '../../core/model/replay';
import type { Log } from '../../core/ports';
import { DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_TURNS, limitBeforeAnyRequest } from '../../core/runtime/budget';
import { ResumeError } from '../../core/runtime/errors';
import type { AgentRuntime } from '../../core/runtime/runtime';
import { runSettingsOf } from '../../core/runtime/agent';
import type { RunOutcome } from '../../core/runtime/types';
import { StoreError, type CheckpointStore } from '../../core/store/contract';
import type { RunSettings } from '../../core/store/records';
import { workspaceKey } from '../../core/store/listing-row';
import {
  commandLaunch,
  createAgentHost,
  nodeWorkspaceOf,
  startMcp,
  type AgentHost,
  type AgentSession,
  type CommandLaunch,
  type ProviderSources,
} from '../node/agent-host/index';
import type { McpConnections } from '../node/mcp/client';
import { McpConfigError } from '../node/mcp/config';
import { cliMcpServers } from '../node/mcp/files';
import { nodeGitReader } from '../node/git-facts';
import { commandSettings, detectSandbox } from '../node/sandbox/index';
import { allowlistText, startCommandProxy, type NetProxy } from '../node/netproxy/index';
import { defaultStoreDir } from '../node/state-dir';
import type { PgCheckpointStore } from '../node/pg/pg-store';
import { isPostgresAddress, openStore, shownAddress, storeAddressOf } from '../node/store-factory';
import { runWorker } from './worker';
import { createCliApprover } from './approver';
import { HELP, outputModeOf, parseCli, resumeOptionsOf, USAGE, UsageError, wantsHelp, type CliOptions } from './args';
import { createRunOutput, raiseHint, type RunOutput, type Sink } from './output';
import { handedKey } from './key-handoff';
import { allowedMcpServers } from './mcp-allowance';
import { damageLine, readStatus, resumeTarget, statusJson } from './status';
import { requireTrustedWorkspace } from './trust';
import { nodeHostFacts } from '../node/host-facts';
import { nodeGitCommitter } from '../node/git/committer';
import { shellOf } from '../node/shell';
import { DEFAULT_MORE_TURNS, forkCommand } from './fork-command';
import { errorText } from '../../core/error-text';
import { counted } from '../../words/words';

export const EXIT = { completed: 0, failed: 1, usage: 2, paused: 3 } as const;

function line(text: string): void {
  process.stderr.write(`${text}\n`);
}

const stderrLog: Log = {
  log(level, message) {
    if (level === 'warn' || level === 'error') line(`${level}: ${message}`);
  },
};

/** The workspace folder, once it is known to be a folder the person trusts. */
function workspaceDir(options: CliOptions): string {
  const dir = resolve(options.workspace!);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`workspace ${dir} is not a folder`);
  requireTrustedWorkspace(dir, options.trust);
  return dir;
}

/** The network proxy of this process's commands (with --command-network allowlist), started by networkOf. */
let commandProxy: NetProxy | undefined;

/**
 * Starts the proxy commands and MCP servers reach the network through (once per process, before the
 * first of them starts), and says which hosts it allows. Without a sandbox there is nothing to hold
 * commands to it: said in a warning.
 */
async function networkOf(options: CliOptions): Promise<void> {
  if (options.commandNetwork !== 'allowlist' || commandProxy !== undefined) return;
  if (!options.sandbox) {
    line('warning: --command-network allowlist needs the sandbox: with --no-sandbox, commands reach any host');
    return;
  }
  const kind = detectSandbox().kind;
  if (kind !== 'bwrap') {
    // sandbox-exec can only deny the network; without a sandbox the runner warns already.
    if (kind === 'sandbox-exec' && !options.quiet)
      line('network: none for commands (the macOS sandbox cannot hold them to the allowlist proxy)');
    return;
  }
  commandProxy = await startCommandProxy({
    allowHosts: options.allowHosts,
    store: storeDir(options),
    howToAllow: (host) => `To allow it, run again with --allow-host ${host}.`,
  });
  if (!options.quiet) line(`network: commands reach ${allowlistText(commandProxy.rules())}`);
}

/** The store's address: a folder (resolved), a postgres:// server, or the extension's store of the workspace. */
function storeDir(options: CliOptions): string {
  if (options.store !== undefined) return isPostgresAddress(options.store) ? options.store : resolve(options.store);
  return defaultStoreDir(options.workspace!);
}

/** Where the CLI finds what a model provider needs: --replay FILE, the key handed to it, --base-url. */
function providerSources(options: CliOptions): ProviderSources {
  return {
    replay: async () => {
      if (options.replay === undefined) throw new UsageError('the replay provider needs --replay FILE');
      const file = resolve(options.replay);
      if (!existsSync(file)) throw new UsageError(`replay file ${file} does not exist`);
      return { text: readFileSync(file, 'utf8'), source: file };
    },
    apiKey: async () => {
      const key = handedKey('ANTHROPIC_API_KEY');
      if (key === undefined || key === '') throw new UsageError('ANTHROPIC_API_KEY is not set (or use --provider replay --replay FILE)');
      return { key, source: 'ANTHROPIC_API_KEY' };
    },
    baseUrl: () => options.baseUrl,
    // Loaded only by a command that calls a model (not for status or fork).
    anthropic: () => import('../../core/model/anthropic'),
  };
}

/** The model provider: --provider, else a run's recorded one (replay or anthropic), else anthropic. */
function providerOf(host: AgentHost, options: CliOptions, recorded?: RunSettings): Promise<ModelProvider> {
  return host.provider({
    named: options.provider,
    configured: { kind: 'anthropic', model: options.model },
    recorded: recorded !== undefined ? { provider: recorded.provider, model: options.model ?? recorded.model } : undefined,
    available: ['anthropic', 'replay'],
  });
}

const stdio: Sink = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };

/** The agent host of one command: the store, the workspace, the launch of commands (--no-sandbox, --pass-env, the proxy), --replay and the key. */
function hostOf(options: CliOptions, dir: string, store: CheckpointStore, storePath: string): AgentHost {
  const address = storeAddressOf(storePath);
  const launch = commandLaunch({
    roots: [dir],
    store: address,
    settings: () => ({ sandbox: options.sandbox ? 'auto' : 'off', network: options.commandNetwork, passEnv: options.passEnv }),
    proxy: () => commandProxy,
    shell: () => shellOf(process.platform, process.env, options.shell),
    warn: (message) => line(`warning: ${message}`),
  });
  return createAgentHost({
    store,
    workspace: nodeWorkspaceOf([dir], address),
    approver: createCliApprover({ yes: options.yes, interactive: process.stdin.isTTY === true && process.stderr.isTTY === true }),
    commands: () => launch.runner(),
    clock: { now: () => Date.now() },
    log: stderrLog,
    git: nodeGitReader,
    gitCommits: nodeGitCommitter(),
    providers: providerSources(options),
    extraTools: () => mcpOf(options, dir, launch),
    // No language service here: the first write's result of a session says so.
    diagnostics: 'none',
  });
}

/** The MCP servers of --mcp-config and the workspace's .vscode/mcp.json, started (again, on resume). */
async function mcpOf(options: CliOptions, dir: string, launch: CommandLaunch): Promise<McpConnections> {
  // Every path to a run comes here first: the proxy is up before any server or command starts.
  await networkOf(options);
  const entries = await allowedMcpServers(cliMcpServers(dir, options.mcpConfig !== undefined ? resolve(options.mcpConfig) : undefined), {
    workspace: dir,
    allow: options.allowWorkspaceMcp,
    interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
    warn: (message) => line(`warning: ${message}`),
  });
  const mcp = await startMcp(entries, { log: stderrLog, folder: dir, launch, client: () => import('../node/mcp/client') });
  if (entries.length > 0 && !options.quiet)
    line(`mcp: ${counted(mcp.tools.length, 'tool')} from ${entries.length - mcp.failures.length} of ${counted(entries.length, 'server')}`);
  return mcp;
}

interface CliRun {
  readonly runtime: AgentRuntime;
  readonly output: RunOutput;
}

/** An agent of the session whose events the CLI prints. */
function runOf(options: CliOptions, session: AgentSession, history: readonly MessageParam[]): CliRun {
  // The output needs the agent's tools; the runtime sends no event before it starts a run.
  const { runtime, tools } = session.agent((event) => output.event(event));
  const output = createRunOutput(outputModeOf(options), stdio, tools, history);
  return { runtime, output };
}

/** The `store: ...` line, unless the person asked for the outcome only. */
function announceStore(options: CliOptions, storePath: string): void {
  if (!options.quiet) line(`store: ${shownAddress(storePath)}`);
}

function cancelOnSignals(): AbortSignal {
  const controller = new AbortController();
  const stop = (): void => {
    line('cancelling at the next safe point...');
    controller.abort();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return controller.signal;
}

function report(run: CliRun, outcome: RunOutcome): number {
  run.output.outcome(outcome);
  if (outcome.status === 'completed') return EXIT.completed;
  if (outcome.status === 'failed') return EXIT.failed;
  return EXIT.paused;
}

async function runCommand(options: CliOptions): Promise<number> {
  const dir = workspaceDir(options);
  const storePath = storeDir(options);
  const host = hostOf(options, dir, openStore(storePath), storePath);
  const model = await providerOf(host, options);
  const provider = options.provider ?? 'anthropic';
  await networkOf(options); // the run records the allowlist its commands start with
  const settings = runSettingsOf({
    model: options.model ?? DEFAULT_MODEL,
    provider,
    maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
    maxOutputTokensPerCall: DEFAULT_MAX_OUTPUT_TOKENS,
    maxTokens: options.maxTokens,
    maxCostUsd: options.maxCostUsd,
    maxContextTokens: options.maxContextTokens,
    thinking: options.thinking,
    commands: commandSettings(
      options.sandbox ? 'auto' : 'off',
      options.commandNetwork,
      commandProxy !== undefined ? allowlistText(commandProxy.rules()) : undefined,
    ),
  });
  if (options.detach && !isPostgresAddress(storePath))
    throw new UsageError('--detach needs --store postgres://... (workers take queued runs from a PostgreSQL store)');
  return host.withSession(model, async (session) => {
    const run = runOf(options, session, []);
    announceStore(options, storePath);
    const request = {
      task: options.task!,
      settings,
      environment: {
        host: nodeHostFacts(process.env, options.sandbox, shellOf(process.platform, process.env, options.shell), options.commandNetwork),
        ...(options.instructionFiles !== undefined ? { instructionFiles: options.instructionFiles } : {}),
      },
    };
    if (options.detach) {
      process.stdout.write(`${await run.runtime.queue(request)}\n`);
      return EXIT.completed;
    }
    return report(run, await run.runtime.start(request, cancelOnSignals()));
  });
}

async function resumeCommand(options: CliOptions): Promise<number> {
  const dir = workspaceDir(options);
  const storePath = storeDir(options);
  const store = openStore(storePath);
  announceStore(options, storePath);
  const state = await resumeTarget(store, options.run, shownAddress(storePath));
  const { runId } = state.run;
  if (state.ended) {
    line(`run ${runId} already ${state.ended.status}; nothing to resume`);
    return state.ended.status === 'completed' ? EXIT.completed : EXIT.failed;
  }
  const resumeOptions = resumeOptionsOf(options);
  // Resuming into the same limit would only pause again: say which flag raises it, send nothing.
  const stuck = limitBeforeAnyRequest(state, resumeOptions.raise);
  if (stuck !== undefined) {
    line(`run ${runId}: ${stuck.reason}; resuming would stop there again, so nothing was sent`);
    line(`  to go on, raise the limit: ${raiseHint(runId, stuck)}`);
    return EXIT.paused;
  }
  const host = hostOf(options, dir, store, storePath);
  return host.withSession(await providerOf(host, options, state.run.settings), async (session) => {
    const run = runOf(options, session, state.messages);
    return report(run, await run.runtime.resume(runId, cancelOnSignals(), resumeOptions));
  });
}

/** `continue`: a new instruction for a stopped run, with the limits the flags raise. */
async function continueCommand(options: CliOptions): Promise<number> {
  const dir = workspaceDir(options);
  const storePath = storeDir(options);
  const store = openStore(storePath);
  announceStore(options, storePath);
  const state = await resumeTarget(store, options.run, shownAddress(storePath));
  const host = hostOf(options, dir, store, storePath);
  return host.withSession(await providerOf(host, options, state.run.settings), async (session) => {
    const run = runOf(options, session, state.messages);
    const { raise } = resumeOptionsOf(options);
    const continued = { moreTurns: DEFAULT_MORE_TURNS, ...(raise ? { raise } : {}) };
    return report(run, await run.runtime.continue(state.run.runId, options.task!, cancelOnSignals(), continued));
  });
}

async function statusCommand(options: CliOptions): Promise<number> {
  const storePath = storeDir(options);
  line(`store: ${shownAddress(storePath)}`);
  const state = await readStatus(openStore(storePath), options.run);
  if (state === undefined) throw new UsageError(`no runs in ${shownAddress(storePath)}`);
  const json = statusJson(state);
  if (options.json) process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  else {
    const damage = damageLine(state);
    if (damage !== undefined) process.stdout.write(`${damage}\n`);
    process.stdout.write(`run ${state.run.runId}: ${state.status}${state.statusReason ? ` (${state.statusReason})` : ''}\n`);
    process.stdout.write(
      `steps ${state.stepId}, turns ${state.budget.turns}/${state.budget.maxTurns}, tokens ${state.budget.inputTokens + state.budget.outputTokens}\n`,
    );
    for (const e of state.ledger) process.stdout.write(`  ${e.callId} ${e.toolName} ${e.status}\n`);
  }
  return EXIT.completed;
}

/** Goes on with the queued and orphaned runs of this workspace in a PostgreSQL store (worker.ts). */
async function workerCommand(options: CliOptions): Promise<number> {
  const dir = workspaceDir(options);
  const storePath = storeDir(options);
  const store = openStore(storePath) as PgCheckpointStore;
  announceStore(options, storePath);
  const git = await nodeGitReader.facts(dir).catch(() => ({ isRepo: false, dirtyPaths: [] }));
  const workspace = workspaceKey({ git, workspaceFolders: [dir] });
  const host = hostOf(options, dir, store, storePath);
  const model = await providerOf(host, options);
  try {
    const worker = await host.withSession(model, (session) =>
      runWorker({
        store,
        workspace,
        concurrency: options.concurrency ?? 1,
        exitWhenIdle: options.exitWhenIdle === true,
        signal: cancelOnSignals(),
        log: (text) => !options.quiet && line(text),
        resume: (runId, cancel) => runOf(options, session, []).runtime.resume(runId, cancel),
      }),
    );
    return worker.failures.length > 0 ? EXIT.failed : EXIT.completed;
  } finally {
    await store.dispose();
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    if (wantsHelp(argv)) {
      process.stdout.write(`${HELP}\n`);
      return EXIT.completed;
    }
    const options = parseCli(argv);
    if (options.command === 'run') return await runCommand(options);
    if (options.command === 'resume') return await resumeCommand(options);
    if (options.command === 'worker') return await workerCommand(options);
    if (options.command === 'continue') return await continueCommand(options);
    if (options.command === 'fork') return await forkCommand(options, workspaceDir(options), storeDir(options));
    return await statusCommand(options);
  } catch (error) {
    if (error instanceof UsageError) {
      line(`error: ${error.message}`);
      if (/command/.test(error.message)) line(USAGE);
      return EXIT.usage;
    }
    if (
      error instanceof ResumeError ||
      error instanceof ReplayScriptError ||
      error instanceof StoreError ||
      error instanceof McpConfigError
    ) {
      line(`error: ${error.message}`);
      return EXIT.usage;
    }
    line(`error: ${errorText(error)}`);
    return EXIT.failed;
  }
}
