import { isAbsolute } from 'node:path';
import { parseHostRule, type Blocked, type HostRule } from './policy';
import { startNetProxy, type NetProxy, type Resolver } from './proxy';
import { userConfiguredHosts } from './user-hosts';

export { startNetProxy, type NetProxy, type Resolver } from './proxy';
export type { HostRule } from './policy';

// The network of a run's commands and MCP servers with `commandNetwork: allowlist`: one proxy per
// host process, its allowlist read at the start from the person's own configuration plus what they
// named (--allow-host), the run store's server refused whatever was allowed.

/** Where a PostgreSQL store lives: its server (never reachable through the proxy) and a socket folder named in its address (hidden). */
export function storeReach(
  address: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { blocked: Blocked[]; socketDirs: string[] } {
  if (address === undefined || !/^postgres(ql)?:\/\//i.test(address)) return { blocked: [], socketDirs: [] };
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return { blocked: [], socketDirs: [] };
  }
  const hosts = [url.hostname, url.searchParams.get('host') ?? '', env['PGHOST'] ?? ''].map(decodeURIComponent).filter((h) => h !== '');
  const port = Number(url.port || url.searchParams.get('port') || env['PGPORT'] || 5432);
  const socketDirs = hosts.filter((h) => isAbsolute(h));
  const names = hosts.filter((h) => !isAbsolute(h));
  const what = 'the run store (PostgreSQL)';
  const blocked = (names.length > 0 ? names : ['localhost']).map((host) => ({ host, port, what }));
  return { blocked, socketDirs };
}

export interface CommandProxyOptions {
  /** HOST or HOST:PORT the person named (flags, user settings). */
  readonly allowHosts: readonly string[];
  /** HOST:PORT the person allowed for this workspace at a prompt earlier (public addresses only, as when asked). */
  readonly approvedHosts?: readonly string[];
  /** The run store's address (a folder or postgres://...). */
  readonly store?: string;
  readonly howToAllow: (hostPort: string) => string;
  readonly ask?: (host: string, port: number) => Promise<boolean>;
  readonly env?: NodeJS.ProcessEnv;
  readonly resolve?: Resolver;
}

/** The allowlist at a run's start: the person's user-level configuration, then what they named. */
export function startingRules(allowHosts: readonly string[], env: NodeJS.ProcessEnv = process.env): HostRule[] {
  const named = allowHosts.map((h) => parseHostRule(h, 'named by the person')).filter((r): r is HostRule => r !== undefined);
  return [...userConfiguredHosts(env), ...named];
}

/** Hosts allowed at an earlier prompt: like a host approved now, they may not reach a loopback or private address. */
function approvedRules(hosts: readonly string[]): HostRule[] {
  return hosts
    .map((h) => parseHostRule(h, 'allowed for this workspace'))
    .filter((r): r is HostRule => r !== undefined)
    .map((r) => ({ ...r, named: false }));
}

/** Starts the proxy of a host's commands. */
export function startCommandProxy(options: CommandProxyOptions): Promise<NetProxy> {
  return startNetProxy({
    rules: [...startingRules(options.allowHosts, options.env), ...approvedRules(options.approvedHosts ?? [])],
    blocked: storeReach(options.store, options.env).blocked,
    howToAllow: options.howToAllow,
    ...(options.ask !== undefined ? { ask: options.ask } : {}),
    ...(options.resolve !== undefined ? { resolve: options.resolve } : {}),
  });
}

/** One line of the allowlist for a person to read: "registry.npmjs.org (~/.npmrc), example.com:8443 (named by the person)". */
export function allowlistText(rules: readonly HostRule[], howToAdd = 'with --allow-host HOST'): string {
  if (rules.length === 0) return `no host (allow one ${howToAdd}, or name it in ~/.npmrc, pip or git --global configuration)`;
  return rules.map((r) => `${r.port !== undefined ? `${r.host}:${r.port}` : r.host} (${r.source})`).join(', ');
}
