import type { RunSettings } from '../store/records';
import { BUILTIN_TOOLS, createToolRegistry, type AnyTool, type ToolPolicyOverrides, type ToolRegistry } from '../tools/registry';
import { AgentRuntime } from './runtime';
import type { RuntimeDeps, RuntimeListener } from './types';

// The one way to build an agent: the Node agent host (host/node/agent-host/) for the CLI and the
// extension, and the tests and benches that replace its Node I/O with fakes, hand in their ports
// and get the same runtime and tools; the run settings they record come from the same function.

export interface AgentPorts extends Omit<RuntimeDeps, 'tools'> {
  /** Where the runtime's events go: the CLI's printed output, the editor's views. */
  readonly output?: RuntimeListener;
  /** Tools besides the built-in ones (MCP servers, VS Code's tools). */
  readonly extraTools?: readonly AnyTool[];
  /** The person's replay policy per tool. */
  readonly toolPolicies?: ToolPolicyOverrides;
  /** A ready registry instead of the built-in and extra tools (tests that relabel or re-police a tool). */
  readonly tools?: ToolRegistry;
}

export interface Agent {
  readonly runtime: AgentRuntime;
  readonly tools: ToolRegistry;
}

/** The runtime and its tools: the built-in ones the workspace supports, then the extra ones. */
export function buildAgent(ports: AgentPorts): Agent {
  const { output, extraTools, toolPolicies, tools: given, ...deps } = ports;
  const tools =
    given ??
    createToolRegistry({
      tools: [...BUILTIN_TOOLS, ...(extraTools ?? [])],
      workspace: ports.workspace,
      git: ports.gitCommits !== undefined,
      ...(toolPolicies !== undefined ? { overrides: toolPolicies } : {}),
    });
  const runtime = new AgentRuntime({ ...deps, tools });
  if (output !== undefined) runtime.onEvent(output);
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
