import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { allowServerQuestion, describeServer, serverFingerprint, type McpServerEntry } from '../node/mcp/config';
import { trustListPath } from './trust';

// A workspace's .vscode/mcp.json names commands the repository chose: the CLI starts one only once
// the person allowed it, as VS Code does. On a terminal it asks, and remembers the answer for this
// workspace and this exact configuration (a changed command asks again) in a user-level file beside
// the trust list, out of any workspace's and any sandboxed command's reach. `--allow-workspace-mcp
// NAME` allows one server for one invocation (scripts). `--trust` alone starts none.

const MAX_FILE_BYTES = 256 * 1024;

/** `$XDG_CONFIG_HOME/agent-checkpoints/allowed-mcp-servers` (else ~/.config/...): one `workspace-digest fingerprint` a line. */
export function allowanceFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(trustListPath(env)), 'allowed-mcp-servers');
}

function allowanceLine(workspace: string, entry: McpServerEntry): string {
  let real = workspace;
  try {
    real = realpathSync.native(workspace);
  } catch {
    // a folder that vanished keeps its given path
  }
  return `${createHash('sha256').update(real).digest('hex').slice(0, 32)} ${serverFingerprint(entry)}`;
}

function remembered(file: string, line: string): boolean {
  try {
    const text = readFileSync(file, 'utf8');
    return text.length <= MAX_FILE_BYTES && text.split('\n').includes(line);
  } catch {
    return false;
  }
}

async function askOnTerminal(entry: McpServerEntry): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(
      `${allowServerQuestion(entry)}\n  it runs: ${describeServer(entry)}\nallow? [y]es (remembered) / [n]o: `,
    );
    return ['y', 'yes'].includes(answer.trim().toLowerCase());
  } finally {
    rl.close();
  }
}

export interface AllowanceOptions {
  readonly workspace: string;
  /** Names of --allow-workspace-mcp. */
  readonly allow: readonly string[];
  readonly interactive: boolean;
  readonly warn: (message: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** The terminal question (a test gives its own). */
  readonly ask?: (entry: McpServerEntry) => Promise<boolean>;
}

/** The entries that may start: every one that is the person's own, and the workspace's that the person allowed. */
export async function allowedMcpServers(entries: readonly McpServerEntry[], options: AllowanceOptions): Promise<McpServerEntry[]> {
  const file = allowanceFile(options.env);
  const out: McpServerEntry[] = [];
  for (const entry of entries) {
    if (entry.source !== 'workspace' || options.allow.includes(entry.name)) {
      out.push(entry);
      continue;
    }
    const line = allowanceLine(options.workspace, entry);
    if (remembered(file, line)) {
      out.push(entry);
      continue;
    }
    if (options.interactive && (await (options.ask ?? askOnTerminal)(entry))) {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      appendFileSync(file, `${line}\n`, { mode: 0o600 });
      out.push(entry);
      continue;
    }
    options.warn(
      `MCP server "${entry.name}" of ${entry.origin} not started: it is the workspace's, so it needs your allowance (answer on a terminal, or --allow-workspace-mcp ${entry.name})`,
    );
  }
  for (const name of options.allow)
    if (!entries.some((e) => e.source === 'workspace' && e.name === name))
      options.warn(`--allow-workspace-mcp ${name}: the workspace's .vscode/mcp.json names no such server`);
  return out;
}
