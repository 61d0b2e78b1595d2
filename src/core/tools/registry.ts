import { z } from 'zod';
import { ReplayPolicy } from '../ledger/schema';
import type { ToolSpec } from '../model/provider';
import type { Workspace } from '../ports';
import { deleteFileTool } from './delete-file';
import { editFileTool } from './edit-file';
import { findFilesTool } from './find-files';
import { gitCommitTool } from './git-commit';
import { gitRevertTool } from './git-revert';
import { listDirTool } from './list-dir';
import { readFileTool } from './read-file';
import { runCommandTool } from './run-command';
import { searchTextTool } from './search-text';
import type { ToolDefinition } from './types';
import { updatePlanTool } from './update-plan';
import { writeFileTool } from './write-file';

/** Configuration: `{ [toolName]: { replayPolicy } }`. */
export const ToolPolicyOverrides = z.record(z.string(), z.strictObject({ replayPolicy: ReplayPolicy.optional() }));
export type ToolPolicyOverrides = z.infer<typeof ToolPolicyOverrides>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds tools of every input type
export type AnyTool = ToolDefinition<any>;

export const BUILTIN_TOOLS: readonly AnyTool[] = [
  readFileTool,
  listDirTool,
  searchTextTool,
  findFilesTool,
  writeFileTool,
  editFileTool,
  deleteFileTool,
  runCommandTool,
  updatePlanTool,
  gitCommitTool,
  gitRevertTool,
];

export interface ToolRegistry {
  get(name: string): AnyTool | undefined;
  list(): readonly AnyTool[];
  /** Definitions for the Messages API `tools` parameter. */
  specs(): ToolSpec[];
}

export function toolSpec(tool: AnyTool): ToolSpec {
  if (tool.inputSchema !== undefined) return { name: tool.name, description: tool.description, input_schema: { ...tool.inputSchema } };
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, input_schema: schema };
}

/**
 * The tools offered to the model. With `workspace`, a tool that needs a capability the workspace
 * lacks (see ToolDefinition.needs) is left out: the model is never offered a tool that can only fail.
 * A tool that needs `git` (git_commit, git_revert) is offered only with `git: true`: the host can
 * commit in the workspace's repository.
 */
export function createToolRegistry(
  options: { tools?: readonly AnyTool[]; overrides?: ToolPolicyOverrides; workspace?: Workspace; git?: boolean } = {},
): ToolRegistry {
  const overrides = ToolPolicyOverrides.parse(options.overrides ?? {});
  const byName = new Map<string, AnyTool>();
  const { workspace } = options;
  for (const tool of options.tools ?? BUILTIN_TOOLS) {
    if (byName.has(tool.name)) throw new Error(`duplicate tool name ${tool.name}`);
    const lacking =
      tool.needs === 'git'
        ? options.git !== true
        : workspace !== undefined && tool.needs !== undefined && workspace[tool.needs] === undefined;
    if (lacking) continue;
    const policy = overrides[tool.name]?.replayPolicy;
    byName.set(tool.name, policy === undefined ? tool : { ...tool, replayPolicy: policy });
  }
  const specs = [...byName.values()].map(toolSpec);
  return {
    get: (name) => byName.get(name),
    list: () => [...byName.values()],
    specs: () => specs,
  };
}

/**
 * The registry as one run sees it: only the tools it started with (its run record's list), so a
 * tool this version added is unknown to an older run even when the model names it; without a
 * recorded list (older records), the whole registry.
 */
export function toolsOfRun(registry: ToolRegistry, recorded: readonly { readonly name: string }[] | undefined): ToolRegistry {
  if (recorded === undefined) return registry;
  const names = new Set(recorded.map((tool) => tool.name));
  const list = registry.list().filter((tool) => names.has(tool.name));
  const specs = registry.specs().filter((spec) => names.has(spec.name));
  return { get: (name) => (names.has(name) ? registry.get(name) : undefined), list: () => list, specs: () => specs };
}

/** The zod error of a tool input, as one readable paragraph for an is_error tool_result. */
export function describeInputError(toolName: string, error: z.ZodError): string {
  return `invalid input for ${toolName}: ${z.prettifyError(error)}`;
}
