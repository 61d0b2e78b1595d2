import type { ModelProvider } from '../../../core/model/provider';
import type { Approver, Clock, CommandRunner, Diagnostics, GitCommitter, Log, Workspace } from '../../../core/ports';
import { buildAgent, type Agent } from '../../../core/runtime/agent';
import type { GitReader, RuntimeListener } from '../../../core/runtime/types';
import type { CheckpointStore } from '../../../core/store/contract';
import type { AnyTool, ToolPolicyOverrides } from '../../../core/tools/registry';
import { NodeWorkspace } from '../node-workspace';
import type { StoreAddress } from '../store-factory';
import { chooseProvider, createProvider, type ProviderInputs, type ProviderSources } from './provider';

export {
  chooseProvider,
  createProvider,
  LANGUAGE_MODEL_PROVIDER,
  type ProviderChoice,
  type ProviderInputs,
  type ProviderSources,
} from './provider';
export {
  commandLaunch,
  sandboxRequest,
  type CommandLaunch,
  type CommandLaunchOptions,
  type CommandPlaces,
  type CommandSettings,
} from './commands';
export { startMcp } from './mcp';
export { forkRun } from './fork';

// The one Node agent host of the CLI (host/cli/main.ts) and the extension (host/vscode/
// agent-controller.ts): the provider a session runs on, the tools it adds, and the agents it hands
// out over buildAgent for start, resume and continue. Each host keeps its own concerns (the CLI its
// flags and printing, the extension VS Code's UI) and hands in its ports; the command launch
// (commands.ts) and the MCP servers (mcp.ts) are built here too.

/** What a session adds to the built-in tools; close() ends what it started (MCP servers). */
export interface ExtraTools {
  readonly tools: readonly AnyTool[];
  close(): Promise<void>;
}

export interface AgentHostPorts {
  readonly store: CheckpointStore;
  readonly workspace: Workspace;
  readonly approver: Approver;
  /** The command runner of the next agent (commandLaunch's, commands.ts). */
  readonly commands: () => CommandRunner;
  readonly clock: Clock;
  readonly log: Log;
  readonly git: GitReader;
  /** Commits for git_commit and git_revert (git/committer.ts), offered when the first folder is in a git repository. */
  readonly gitCommits?: GitCommitter;
  /** Where the key and a replay script come from. */
  readonly providers: ProviderSources;
  /** The tools a session adds (MCP servers: startMcp; the editor's tools), started when it opens. */
  readonly extraTools?: () => Promise<ExtraTools>;
  /** The editor's problems after writes (VS Code's); `none` for a host without language services (the CLI). */
  readonly diagnostics?: Diagnostics | 'none';
}

/** The person's tool choices of a session (the extension's settings). */
export interface ToolChoices {
  readonly toolPolicies?: ToolPolicyOverrides;
  readonly protectedPaths?: readonly string[];
}

/** One session: a model and the tools it started, until closed. */
export interface AgentSession {
  /** An agent over the session's model and tools, its events to `output` (a worker builds one per claimed run). */
  agent(output: RuntimeListener): Agent;
  /** Ends what the session started (its MCP servers). */
  close(): Promise<void>;
}

export interface AgentHost {
  /** The model provider of a session: chosen (a run going on keeps its recorded provider), then built. */
  provider(inputs: ProviderInputs): Promise<ModelProvider>;
  /** Starts the session's extra tools; throws before anything starts when they cannot be had. */
  open(model: ModelProvider, choices?: ToolChoices): Promise<AgentSession>;
  /** `work` on a session opened for it, closed after it whatever happens (the CLI's commands). */
  withSession<T>(model: ModelProvider, work: (session: AgentSession) => Promise<T>): Promise<T>;
}

export function createAgentHost(ports: AgentHostPorts): AgentHost {
  const host: AgentHost = {
    provider: (inputs) => createProvider(chooseProvider(inputs), ports.providers, ports.log),
    async withSession(model, work) {
      const session = await host.open(model);
      try {
        return await work(session);
      } finally {
        await session.close();
      }
    },
    async open(model, choices = {}) {
      const extra = (await ports.extraTools?.()) ?? { tools: [], close: async () => undefined };
      const root = ports.workspace.roots[0];
      const repo = root !== undefined && ports.gitCommits ? await ports.gitCommits.inspect(root, []).catch(() => undefined) : undefined;
      return {
        agent: (output) =>
          buildAgent({
            store: ports.store,
            workspace: ports.workspace,
            model,
            approver: ports.approver,
            commands: ports.commands(),
            clock: ports.clock,
            log: ports.log,
            git: ports.git,
            ...(repo !== undefined ? { gitCommits: ports.gitCommits } : {}),
            ...(ports.diagnostics !== undefined ? { diagnostics: ports.diagnostics } : {}),
            extraTools: extra.tools,
            ...choices,
            output,
          }),
        close: () => extra.close(),
      };
    },
  };
  return host;
}

/** The workspace over Node fs (the CLI's): the file store's folder is never readable or writable through it. */
export function nodeWorkspaceOf(roots: readonly string[], store: StoreAddress): NodeWorkspace {
  return new NodeWorkspace({ roots, ...(store.kind === 'files' ? { storeDir: store.dir } : {}) });
}
