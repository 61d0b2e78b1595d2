import { createHash } from 'node:crypto';
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser/lib/esm/main.js';
import { z } from 'zod';
import { InverseInput } from '../../../core/ledger/inverse';

// MCP server configuration in the shape VS Code's `.vscode/mcp.json` uses: `{ "servers": { name: server } }`,
// a server being stdio (`command`, `args`, `env`, `cwd`) or HTTP (`type: "http"`, `url`, `headers`).
// A bad file is refused whole, with the file and the field named: no server of it starts.

const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * `compensations`: how to undo a tool's effect by another tool of the same server, e.g.
 * `"create_issue": { "tool": "close_issue", "input": { "number": "{{result.number}}" } }`.
 */
const Compensations = z
  .record(z.string().min(1).max(128), z.strictObject({ tool: z.string().min(1).max(128), input: InverseInput }))
  .refine((map) => Object.keys(map).length <= 100, { message: 'at most 100 compensations' })
  .optional();

/**
 * `parallelReads`: the person trusts this server's read-only tools (`readOnlyHint`) to read only, so
 * several of its calls in one answer may run at once. Honoured from the person's own configuration
 * (user settings, `--mcp-config`), never from the workspace's file: a hint is the server's claim.
 */
const ParallelReads = z.boolean().optional();

export const StdioServerConfig = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string().nullable()).default({}),
  cwd: z.string().min(1).optional(),
  envFile: z.string().optional(),
  compensations: Compensations,
  parallelReads: ParallelReads,
});

export const HttpServerConfig = z.strictObject({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).default({}),
  compensations: Compensations,
  parallelReads: ParallelReads,
});

export const McpServerConfig = z.union([StdioServerConfig, HttpServerConfig]);
export type McpServerConfig = z.infer<typeof McpServerConfig>;

/** Server names become the first half of tool names (`server__tool`). */
export const ServerName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/, 'a server name is 1-40 letters, digits, _ . -');

export const McpConfigFile = z.object({
  servers: z.record(ServerName, McpServerConfig).default({}),
  /** VS Code's prompted inputs: accepted in the file, not supported here (a server that uses them fails to start). */
  inputs: z.array(z.unknown()).optional(),
});

/** Where a server was named: the workspace's file needs the person's allowance, the others are the person's own. */
export type McpSource = 'workspace' | 'user' | 'cli';

export interface McpServerEntry {
  readonly name: string;
  readonly source: McpSource;
  /** File the server was read from, for messages. */
  readonly origin: string;
  readonly config: McpServerConfig;
}

/** Whether the person trusts the server's read-only tools to run beside other reads: `parallelReads` in their own config only. */
export function trustsParallelReads(entry: McpServerEntry): boolean {
  return entry.source !== 'workspace' && entry.config.parallelReads === true;
}

export class McpConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpConfigError';
  }
}

function issuePath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(top level)' : path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.');
}

/** Parses one configuration (JSON with comments) or throws an McpConfigError naming `origin` and the field. */
export function parseMcpConfig(text: string, origin: string, source: McpSource): McpServerEntry[] {
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES) throw new McpConfigError(`${origin}: larger than ${MAX_CONFIG_BYTES} bytes`);
  const errors: ParseError[] = [];
  const json: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  const first = errors[0];
  if (first !== undefined)
    throw new McpConfigError(`${origin}: not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset})`);
  return entriesOf(json, origin, source);
}

/** Checks a value already parsed (a setting), as parseMcpConfig does. */
export function entriesOf(json: unknown, origin: string, source: McpSource): McpServerEntry[] {
  const parsed = McpConfigFile.safeParse(json ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new McpConfigError(`${origin}: ${issuePath(issue.path)}: ${issue.message}`);
  }
  return Object.entries(parsed.data.servers).map(([name, config]) => {
    if (config.type !== 'http' && config.envFile !== undefined)
      throw new McpConfigError(`${origin}: servers.${name}.envFile: not supported; name the variables in "env"`);
    return { name, source, origin, config };
  });
}

/** Joins configurations; a name given twice is refused (which one counts would be a guess). */
export function mergeEntries(...lists: readonly (readonly McpServerEntry[])[]): McpServerEntry[] {
  const byName = new Map<string, McpServerEntry>();
  for (const entry of lists.flat()) {
    const other = byName.get(entry.name);
    if (other !== undefined) throw new McpConfigError(`MCP server "${entry.name}" is named in both ${other.origin} and ${entry.origin}`);
    byName.set(entry.name, entry);
  }
  return [...byName.values()];
}

/** A digest of what a server runs: an allowance is for this exact configuration, so a changed command asks again. */
export function serverFingerprint(entry: McpServerEntry): string {
  return createHash('sha256')
    .update(JSON.stringify([entry.name, entry.config]))
    .digest('hex')
    .slice(0, 32);
}

/** What a server runs, in one line, for the question that allows it (VS Code and the CLI ask the same). */
export function describeServer(entry: McpServerEntry): string {
  const c = entry.config;
  return c.type === 'http' ? c.url : [c.command, ...c.args].join(' ');
}

/** The question that allows a workspace's server, in both hosts. */
export function allowServerQuestion(entry: McpServerEntry): string {
  return `${entry.origin} names the MCP server "${entry.name}". Allow the agent to start it and call its tools in this workspace?`;
}

/** `${workspaceFolder}` as VS Code expands it in mcp.json; other variables are left as written. */
export function expandWorkspaceFolder(config: McpServerConfig, folder: string | undefined): McpServerConfig {
  if (folder === undefined) return config;
  const sub = (text: string): string => text.split('${workspaceFolder}').join(folder);
  if (config.type === 'http') return { ...config, url: sub(config.url) };
  return {
    ...config,
    command: sub(config.command),
    args: config.args.map(sub),
    env: Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, v === null ? null : sub(v)])),
    ...(config.cwd !== undefined ? { cwd: sub(config.cwd) } : {}),
  };
}
