import type { ModelProvider } from '../model/provider';
import type { Approver, Clock, CommandRunner, Log, Workspace } from '../ports';
import type { CheckpointStore } from '../store/contract';
import type { RunSettings } from '../store/records';
import { BUILTIN_TOOLS, createToolRegistry, type AnyTool, type ToolPolicyOverrides, type ToolRegistry } from '../tools/registry';
import { AgentRuntime } from './runtime';
import type { GitReader, RuntimeListener } from './types';

// How every host builds an agent: the CLI (host/cli/main.ts, its worker) and the extension
// (host/vscode/agent-controller.ts) hand in their ports and get the same runtime and tools; the
// run settings they record come from the same function.

export interface AgentPorts {
  readonly store: CheckpointStore;
  readonly workspace: Workspace;
  readonly approver: Approver;
  readonly model: ModelProvider;
  readonly commands: CommandRunner;
  readonly clock: Clock;
  readonly log: Log;
  readonly git: GitReader;
  /** Where the runtime's events go: the CLI's printed output, the editor's views. */
  readonly output: RuntimeListener;
  /** Tools besides the built-in ones (MCP servers, VS Code's tools). */
  readonly extraTools?: readonly AnyTool[];
  /** The person's replay policy per tool. */
  readonly toolPolicies?: ToolPolicyOverrides;
  /** Globs added to the built-in protected paths. */
  readonly protectedPaths?: readonly string[];
}

export interface Agent {
  readonly runtime: AgentRuntime;
  readonly tools: ToolRegistry;
}

/** The runtime and its tools: the built-in ones the workspace supports, then the extra ones. */
export function buildAgent(ports: AgentPorts): Agent {
  const tools = createToolRegistry({
    tools: [...BUILTIN_TOOLS, ...(ports.extraTools ?? [])],
    workspace: ports.workspace,
    ...(ports.toolPolicies !== undefined ? { overrides: ports.toolPolicies } : {}),
  });
  const runtime = new AgentRuntime({
    tools,
    store: ports.store,
    workspace: ports.workspace,
    model: ports.model,
    approver: ports.approver,
    commands: ports.commands,
    clock: ports.clock,
    log: ports.log,
    git: ports.git,
    ...(ports.protectedPaths !== undefined ? { protectedPaths: ports.protectedPaths } : {}),
  });
  runtime.onEvent(ports.output);
  return { runtime, tools };
}

/** A host's choices for a new run, before they are recorded. */
export interface RunChoices extends Pick<RunSettings, 'model' | 'provider' | 'maxTurns' | 'maxOutputTokensPerCall' | 'commands'> {
  readonly maxTokens?: number | undefined;
  readonly maxCostUsd?: number | undefined;
  readonly maxContextTokens?: number | undefined;
  /** Extended thinking: off, adaptive, or a budget of N tokens per call. */
  readonly thinking?: 'off' | 'adaptive' | number | undefined;
}

/** The settings a new run records (never a credential): the one place host choices become them. */
export function runSettingsOf(choices: RunChoices): RunSettings {
  const { thinking } = choices;
  return {
    model: choices.model,
    provider: choices.provider,
    maxTurns: choices.maxTurns,
    ...(choices.maxTokens !== undefined ? { maxTokens: choices.maxTokens } : {}),
    ...(choices.maxCostUsd !== undefined ? { maxCostUsd: choices.maxCostUsd } : {}),
    maxOutputTokensPerCall: choices.maxOutputTokensPerCall,
    ...(choices.maxContextTokens !== undefined ? { maxContextTokens: choices.maxContextTokens } : {}),
    ...(thinking === 'adaptive' ? { thinking: { type: 'adaptive' as const } } : {}),
    ...(typeof thinking === 'number' ? { thinking: { type: 'enabled' as const, budgetTokens: thinking } } : {}),
    ...(choices.commands !== undefined ? { commands: choices.commands } : {}),
  };
}
