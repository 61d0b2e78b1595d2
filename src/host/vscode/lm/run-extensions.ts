import * as vscode from 'vscode';
import type { ModelProvider } from '../../../core/model/provider';
import type { Log } from '../../../core/ports';
import { BUILTIN_TOOLS, type AnyTool } from '../../../core/tools/registry';
import { startMcpServers } from '../../node/mcp/client';
import type { SandboxRequest } from '../../node/sandbox/index';
import type { Prompts } from '../prompts';
import { languageModelTools } from './lm-tools';
import { runMcpServers, userSetting } from './mcp-servers';
import { createVscodeLmProvider } from './vscode-lm-provider';

/** What a run session adds to the built-in tools; close() ends the MCP servers it started. */
export interface ExtraTools {
  readonly tools: readonly AnyTool[];
  close(): Promise<void>;
}

/** The tools and the provider the editor brings to a run (MCP servers, VS Code's tools and models). */
export interface RunExtensions {
  tools(): Promise<ExtraTools>;
  provider(): ModelProvider;
}

function toolNamesSetting(): string[] {
  const value = userSetting('languageModelTools');
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function createRunExtensions(deps: {
  state: vscode.Memento;
  prompts: Prompts;
  log: Log;
  /** The sandbox MCP servers run in, as commands do. */
  sandbox?: () => SandboxRequest | undefined;
  /** Host variables the person lets commands and servers have (agentCheckpoints.commandEnvironment). */
  passEnv?: () => readonly string[];
}): RunExtensions {
  return {
    async tools() {
      const entries = await runMcpServers(deps.state, deps.prompts, deps.log);
      const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
      const reserved = BUILTIN_TOOLS.map((t) => t.name);
      const mcp = await startMcpServers(entries, {
        log: deps.log,
        reserved,
        ...(folder !== undefined ? { folder } : {}),
        ...(deps.sandbox !== undefined ? { sandbox: deps.sandbox } : {}),
        ...(deps.passEnv !== undefined ? { passEnv: deps.passEnv() } : {}),
      });
      const taken = new Set([...reserved, ...mcp.tools.map((t) => t.name)]);
      const lm = languageModelTools(toolNamesSetting(), taken);
      if (mcp.tools.length + lm.length > 0) deps.log.log('info', `external tools: ${[...mcp.tools, ...lm].map((t) => t.name).join(', ')}`);
      return { tools: [...mcp.tools, ...lm], close: () => mcp.close() };
    },
    provider: () => createVscodeLmProvider(),
  };
}
