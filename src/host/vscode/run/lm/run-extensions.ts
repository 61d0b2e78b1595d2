import * as vscode from 'vscode';
import type { ModelProvider } from '../../../../core/model/provider';
import type { Log } from '../../../../core/ports';
import { BUILTIN_TOOLS } from '../../../../core/tools/registry';
import { startMcp, type CommandLaunch, type ExtraTools } from '../../../node/agent-host/index';
import { startMcpServers } from '../../../node/mcp/client';
import type { Prompts } from '../../window/prompts';
import { languageModelTools } from './lm-tools';
import { runMcpServers, userSetting } from './mcp-servers';
import { createVscodeLmProvider } from './vscode-lm-provider';

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
  /** How commands start: MCP servers start in the same sandbox, with the same variables (agentCheckpoints.commandEnvironment). */
  launch: CommandLaunch;
}): RunExtensions {
  return {
    async tools() {
      const entries = await runMcpServers(deps.state, deps.prompts, deps.log);
      const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
      const mcp = await startMcp(entries, { log: deps.log, folder, launch: deps.launch, client: async () => ({ startMcpServers }) });
      const taken = new Set([...BUILTIN_TOOLS.map((t) => t.name), ...mcp.tools.map((t) => t.name)]);
      const lm = languageModelTools(toolNamesSetting(), taken);
      if (mcp.tools.length + lm.length > 0) deps.log.log('info', `external tools: ${[...mcp.tools, ...lm].map((t) => t.name).join(', ')}`);
      return { tools: [...mcp.tools, ...lm], close: () => mcp.close() };
    },
    provider: () => createVscodeLmProvider(),
  };
}
