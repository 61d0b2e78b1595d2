import * as vscode from 'vscode';
import type { Log } from '../../../../core/ports';
import {
  allowServerQuestion,
  describeServer,
  entriesOf,
  McpConfigError,
  mergeEntries,
  serverFingerprint,
  type McpServerEntry,
} from '../../../node/mcp/config';
import { readConfigFile, workspaceMcpFile } from '../../../node/mcp/files';
import type { Prompts } from '../../window/prompts';
import type { CommandId } from '../../commands/command-table';
import { counted } from '../../../../words/words';

// Which MCP servers a run of the extension starts: the user setting agentCheckpoints.mcpServers
// (user scope only: a workspace cannot name a server there), and the servers of each workspace
// folder's .vscode/mcp.json, only in a trusted workspace and only once the person has allowed that
// server, in that exact configuration, for this workspace (remembered in workspaceState; revocable).

export const ALLOWED_SERVERS_KEY = 'agentCheckpoints.mcp.allowedServers';
export const REVOKE_MCP_COMMAND = 'agentCheckpoints.revokeMcpServers' satisfies CommandId;
const SECTION = 'agentCheckpoints';
const ALLOW = 'Allow';

/** A setting's own user (global) value; workspace values are ignored. */
export function userSetting(key: string): unknown {
  return vscode.workspace.getConfiguration(SECTION).inspect(key)?.globalValue;
}

function userServers(): McpServerEntry[] {
  const value = userSetting('mcpServers');
  return value === undefined ? [] : entriesOf({ servers: value }, 'user setting agentCheckpoints.mcpServers', 'user');
}

async function allowed(entry: McpServerEntry, state: vscode.Memento, prompts: Prompts): Promise<boolean> {
  const known = state.get<string[]>(ALLOWED_SERVERS_KEY, []);
  const print = serverFingerprint(entry);
  if (known.includes(print)) return true;
  const choice = await prompts.message(
    'warning',
    allowServerQuestion(entry),
    {
      modal: true,
      detail: `It runs: ${describeServer(entry)}\nIts tool calls are recorded in the ledger; calls that change something ask first.`,
    },
    ALLOW,
  );
  if (choice !== ALLOW) return false;
  await state.update(ALLOWED_SERVERS_KEY, [...known, print]);
  return true;
}

/** The servers of this run; a bad file or setting throws an McpConfigError naming it (nothing starts). */
export async function runMcpServers(state: vscode.Memento, prompts: Prompts, log: Log): Promise<McpServerEntry[]> {
  const user = userServers();
  // Restricted Mode: the agent does not run at all; the workspace's servers are never even read.
  if (!vscode.workspace.isTrusted) return user;
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  const named = folders.flatMap((f) => readConfigFile(workspaceMcpFile(f.uri.fsPath), 'workspace', true));
  const granted: McpServerEntry[] = [];
  for (const entry of named) {
    if (await allowed(entry, state, prompts)) granted.push(entry);
    else log.log('info', `MCP server ${entry.name} of ${entry.origin} not allowed: not started`);
  }
  return mergeEntries(user, granted);
}

export async function revokeMcpServers(state: vscode.Memento, prompts: Prompts): Promise<void> {
  const count = state.get<string[]>(ALLOWED_SERVERS_KEY, []).length;
  await state.update(ALLOWED_SERVERS_KEY, undefined);
  await prompts.message(
    'info',
    `Agent: ${counted(count, 'MCP server allowance')} of this workspace revoked; each server asks again before it starts.`,
    {},
  );
}

export { McpConfigError };
