import type { Inverse } from '../../../core/ledger/inverse';
import { existsSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Log } from '../../../core/ports';
import type { AnyTool } from '../../../core/tools/registry';
import { externalToolName } from './classify';
import { buildEnvironment } from '../command-env';
import { NO_VIEW_MARK, type SandboxRequest } from '../sandbox/index';
import { callChanges, serverSandbox, type ServerSandbox } from './server-view';
import { expandWorkspaceFolder, trustsParallelReads, type McpServerConfig, type McpServerEntry } from './config';
import { boundText, externalTool, type ExternalOutput } from './external-tool';
import { errorText } from '../../../core/error-text';
import { counted } from '../../../words/words';

// The MCP client both hosts use: starts each configured server (stdio child or streamable HTTP),
// lists its tools, and turns them into registry tools named `server__tool`. A server that fails
// to start is reported and left out; the others still serve.

const CLIENT_INFO = { name: 'agent-checkpoints', version: '0.1.0' };
const CONNECT_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 10 * 60_000;
const MAX_TOOLS_PER_SERVER = 200;

export interface McpConnections {
  readonly tools: readonly AnyTool[];
  /** One line per server that failed to start or list its tools. */
  readonly failures: readonly string[];
  close(): Promise<void>;
}

export interface StartOptions {
  readonly log: Log;
  /** The workspace folder: `${workspaceFolder}` and the default cwd of stdio servers. */
  readonly folder?: string;
  /** Names already taken (the built-in tools). */
  readonly reserved?: readonly string[];
  /** The sandbox stdio servers run in, as commands do (undefined: the person switched it off). */
  readonly sandbox?: () => SandboxRequest | undefined;
  /** Host variables (names or patterns) the person lets commands and servers have besides the base set. */
  readonly passEnv?: readonly string[];
}

/** A word of a POSIX shell command line, quoted. */
function shellWord(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The nearest node_modules folder above `dir`, where Node looks first for a script's packages. */
function nearestNodeModules(dir: string): string | undefined {
  for (let at = dir; ; at = nodePath.dirname(at)) {
    const candidate = nodePath.join(at, 'node_modules');
    if (existsSync(candidate)) return candidate;
    if (nodePath.dirname(at) === at) return undefined;
  }
}

/**
 * The folders a server's own command line names (its program, a script and, for a script inside a
 * node_modules, that whole node_modules; for one outside, the nearest node_modules above it, whose
 * packages it imports): visible read-only in the sandbox wherever they are (a hidden home, a
 * private /tmp), so the person's server still starts.
 */
export function serverProgramDirs(command: string, args: readonly string[]): string[] {
  const dirs: string[] = [];
  for (const word of [command, ...args]) {
    if (!nodePath.isAbsolute(word) || !existsSync(word)) continue;
    const dir = statSync(word).isDirectory() ? word : nodePath.dirname(word);
    const at = dir.lastIndexOf(`${nodePath.sep}node_modules${nodePath.sep}`);
    if (at >= 0) dirs.push(dir.slice(0, at + `${nodePath.sep}node_modules`.length));
    else dirs.push(dir, ...[nearestNodeModules(dir)].filter((d) => d !== undefined));
  }
  return dirs;
}

/** The sandboxed start of a stdio server, or undefined (no sandbox wanted, or none on this platform). */
function sandboxOf(
  config: Extract<McpServerConfig, { command: string }>,
  cwd: string | undefined,
  options: StartOptions,
  pid: () => number | null | undefined,
  noView?: string,
): ServerSandbox | undefined {
  const request = options.sandbox?.();
  if (request === undefined || cwd === undefined) return undefined;
  const programDirs = [...(request.programDirs ?? []), ...serverProgramDirs(config.command, config.args)];
  const command = [config.command, ...config.args].map(shellWord).join(' ');
  return serverSandbox({ ...request, programDirs }, cwd, command, pid, noView);
}

/** A server's transport, with its sandbox (undefined when none) and the start of its stderr (why a view failed to mount). */
interface Started {
  readonly transport: Transport;
  readonly sandbox?: ServerSandbox;
  readonly stderrHead: () => string;
}

/**
 * A stdio server's environment: built as a command's is (command-env.ts), plus the variables its
 * configuration names, as given there (a `null` one is left out).
 */
export function serverEnvironment(
  given: Readonly<Record<string, string | null>>,
  passEnv: readonly string[],
  told: (names: string) => void,
  host: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const built = buildEnvironment(host, { allowed: passEnv });
  const named = Object.fromEntries(Object.entries(given).filter((pair): pair is [string, string] => pair[1] !== null));
  const withheld = built.withheldCredentials.filter((name) => !(name in given));
  if (withheld.length > 0) told(withheld.join(', '));
  const env: Record<string, string> = { ...built.env, ...named };
  for (const [name, value] of Object.entries(given)) if (value === null) delete env[name];
  return env;
}

function transportOf(config: McpServerConfig, options: StartOptions, name: string, noView?: string): Started {
  if (config.type === 'http')
    return {
      transport: new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } }),
      stderrHead: () => '',
    };
  const { folder, log } = options;
  const env = serverEnvironment(config.env, options.passEnv ?? [], (names) =>
    log.log(
      'info',
      `MCP server ${name}: host variables that look like credentials withheld (name them in its "env" to pass them): ${names}`,
    ),
  );
  const cwd = config.cwd ?? folder;
  // The view is read through the server's mount namespace: its process, once the transport started it.
  const spawned: { transport?: StdioClientTransport } = {};
  const sandbox = sandboxOf(config, cwd, options, () => spawned.transport?.pid, noView);
  const launch = sandbox?.launch;
  // The SDK adds a few of the base variables (PATH, HOME...) to `env`: no key of ours reaches it.
  const transport = new StdioClientTransport({
    command: launch?.file ?? config.command,
    args: launch !== undefined ? [...launch.args] : config.args,
    // With the allowlist, the proxy's variables win over the server's own (its traffic leaves only through the proxy).
    env: launch !== undefined ? { ...env, ...launch.env } : env,
    stderr: 'pipe',
    ...(cwd ? { cwd } : {}),
  });
  spawned.transport = transport;
  let head = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    if (head.length < 4096) head += chunk.toString('utf8');
    log.log('debug', `mcp ${name}: ${chunk.toString('utf8').slice(0, 500).trimEnd()}`);
  });
  return { transport, ...(sandbox !== undefined ? { sandbox } : {}), stderrHead: () => head };
}

/** MCP content blocks as the text of a tool_result: text as is, other kinds named. */
export function resultText(result: Record<string, unknown>): string {
  const blocks = Array.isArray(result['content']) ? (result['content'] as Record<string, unknown>[]) : [];
  const parts = blocks.map((block) => {
    if (block['type'] === 'text' && typeof block['text'] === 'string') return block['text'];
    if (block['type'] === 'resource_link') return `[resource link: ${String(block['uri'])}]`;
    if (block['type'] === 'resource') {
      const resource = (block['resource'] ?? {}) as Record<string, unknown>;
      return typeof resource['text'] === 'string' ? resource['text'] : `[resource: ${String(resource['uri'])}]`;
    }
    return `[${String(block['type'])} content omitted${typeof block['mimeType'] === 'string' ? `: ${block['mimeType']}` : ''}]`;
  });
  if (parts.length === 0 && result['structuredContent'] !== undefined) parts.push(JSON.stringify(result['structuredContent']));
  return boundText(parts.join('\n'));
}

async function listAll(client: Client): Promise<Awaited<ReturnType<Client['listTools']>>['tools']> {
  const tools: Awaited<ReturnType<Client['listTools']>>['tools'] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor !== undefined ? { cursor } : {}, { timeout: CONNECT_TIMEOUT_MS });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined && tools.length < MAX_TOOLS_PER_SERVER);
  return tools.slice(0, MAX_TOOLS_PER_SERVER);
}

/** The declared inverse of a server's tool, in registry names; none when the config names a tool the server does not list. */
function inverseOf(entry: McpServerEntry, tool: string, names: ReadonlyMap<string, string>): Inverse | undefined {
  const declared = entry.config.compensations?.[tool];
  const inverseName = declared ? names.get(declared.tool) : undefined;
  return declared && inverseName ? { tool: inverseName, input: declared.input } : undefined;
}

/** A connected server, with its sandbox (released when the session ends). */
interface Opened {
  readonly client: Client;
  readonly sandbox?: ServerSandbox;
}

/** Connects to a server; a view the file system refuses to mount is said, and the server starts again without one (read-only). */
async function open(entry: McpServerEntry, options: StartOptions, noView?: string): Promise<Opened> {
  const client = new Client(CLIENT_INFO);
  const started = transportOf(expandWorkspaceFolder(entry.config, options.folder), options, entry.name, noView);
  try {
    await client.connect(started.transport, { timeout: CONNECT_TIMEOUT_MS });
  } catch (error) {
    started.sandbox?.launch.release();
    const refused = started.sandbox?.view !== undefined && started.stderrHead().includes(NO_VIEW_MARK);
    if (!refused) throw error;
    const why = started.stderrHead().trim().split('\n').pop() ?? '';
    return open(entry, options, `the workspace folder cannot be an overlay layer here: ${why}`);
  }
  return { client, ...(started.sandbox !== undefined ? { sandbox: started.sandbox } : {}) };
}

/** A server tool as a registry tool: each call answers with the server's result and what it changed in its view. */
function toolOf(opened: Opened, entry: McpServerEntry, listed: ListedTool, name: string, inverse: Inverse | undefined): AnyTool {
  const call = async (input: Record<string, unknown>, signal: AbortSignal): Promise<ExternalOutput> => {
    const started = Date.now();
    const result = await opened.client.callTool({ name: listed.name, arguments: input }, undefined, {
      signal,
      timeout: CALL_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
    });
    const output = { content: resultText(result), ...(result.isError === true ? { isError: true } : {}) };
    return { ...output, ...(await callChanges(opened.sandbox?.view, started)) };
  };
  return externalTool({
    name,
    where: `MCP server ${entry.name}`,
    description: listed.description,
    inputSchema: listed.inputSchema,
    hints: listed.annotations,
    ...(inverse ? { inverse } : {}),
    trustedReads: trustsParallelReads(entry),
    call,
  });
}

type ListedTool = Awaited<ReturnType<Client['listTools']>>['tools'][number];

async function connect(entry: McpServerEntry, options: StartOptions, taken: Set<string>, opened: Opened): Promise<AnyTool[]> {
  const listedTools = await listAll(opened.client);
  const names = new Map<string, string>();
  for (const listed of listedTools) {
    const name = externalToolName(entry.name, listed.name, taken);
    taken.add(name);
    names.set(listed.name, name);
  }
  return listedTools.map((listed) => toolOf(opened, entry, listed, names.get(listed.name)!, inverseOf(entry, listed.name, names)));
}

/** Starts the servers (already allowed by the caller) one after another and collects their tools. */
export async function startMcpServers(entries: readonly McpServerEntry[], options: StartOptions): Promise<McpConnections> {
  const taken = new Set(options.reserved ?? []);
  const clients: Client[] = [];
  const tools: AnyTool[] = [];
  const failures: string[] = [];
  const sandboxes: ServerSandbox[] = [];
  for (const entry of entries) {
    try {
      const opened = await open(entry, options);
      if (opened.sandbox !== undefined) sandboxes.push(opened.sandbox);
      const listed = await connect(entry, options, taken, opened).catch(async (error: unknown) => {
        await opened.client.close().catch(() => undefined);
        throw error;
      });
      clients.push(opened.client);
      tools.push(...listed);
      const note = opened.sandbox !== undefined ? `; it ${opened.sandbox.note}` : '';
      options.log.log('info', `MCP server ${entry.name}: ${counted(listed.length, 'tool')}${note}`);
    } catch (error) {
      const message = `MCP server ${entry.name} (${entry.origin}) did not start: ${errorText(error)}`;
      failures.push(message);
      options.log.log('warn', message);
    }
  }
  return {
    tools,
    failures,
    close: async () => {
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      for (const sandbox of sandboxes) sandbox.launch.release();
    },
  };
}
