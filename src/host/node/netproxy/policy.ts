import { isIP } from 'node:net';

// What the network proxy lets a sandboxed command reach: host names (and host:port pairs) the
// person allowed, checked again on the address a name resolves to. No host name is written here:
// the allowed ones come from the person's user-level configuration (user-hosts.ts) and flags.

/** One allowed destination: a host name or address, with the port it may use (undefined: 443 for CONNECT, 80 for plain HTTP). */
export interface HostRule {
  readonly host: string;
  readonly port?: number;
  /** Where the rule came from, for the Timeline and messages (e.g. "~/.npmrc", "--allow-host"). */
  readonly source: string;
  /**
   * False for a host approved at a prompt during the run (a name the model chose): it may reach
   * public addresses only, so a name that resolves to the host's loopback, a metadata address or a
   * private network (DNS rebinding) is refused. Hosts the person named (user configuration, flags) may.
   */
  readonly named?: boolean;
}

/** An address the proxy never connects to, whatever was allowed (the run store's server). */
export interface Blocked {
  readonly host: string;
  readonly port: number;
  /** What it is, for the refusal message. */
  readonly what: string;
}

/** A refusal's `askable`: the host is simply not on the list (a host could ask the person), not refused by a rule. */
export type Decision =
  { allowed: true; named: boolean } | { allowed: false; reason: string; host: string; port: number; askable?: boolean };

/** A host name as compared: lower case, no trailing dot, IPv6 literals without brackets. */
export function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/** Parses `HOST`, `HOST:PORT` or `[V6]:PORT` (as --allow-host takes it); undefined when it is not one. */
export function parseHostRule(text: string, source: string): HostRule | undefined {
  const trimmed = text.trim();
  const v6 = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/i.exec(trimmed);
  const plain = /^([a-z0-9_.-]+)(?::(\d{1,5}))?$/i.exec(trimmed);
  const match = v6 ?? (isIP(trimmed) === 6 ? [trimmed, trimmed, undefined] : plain);
  if (!match) return undefined;
  const host = normalHost(match[1]!);
  const port = match[2] !== undefined ? Number(match[2]) : undefined;
  if (host === '' || (port !== undefined && (port < 1 || port > 65535))) return undefined;
  if (isIP(host) === 0 && !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host)) return undefined;
  return { host, ...(port !== undefined ? { port } : {}), source };
}

/** The rule of an http(s) URL's host (its port kept when it is not the scheme's default); undefined for anything else. */
export function ruleOfUrl(url: string, source: string): HostRule | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  return parseHostRule(parsed.port !== '' ? `${parsed.hostname}:${parsed.port}` : parsed.hostname, source);
}

/** The port a request to `host` uses without a rule of its own: 443 through CONNECT, 80 for plain HTTP. */
const defaultPort = (kind: 'connect' | 'http'): number => (kind === 'connect' ? 443 : 80);

/** The rule that allows this host and port (a rule without a port covers the default port only). */
export function ruleFor(rules: readonly HostRule[], host: string, port: number, kind: 'connect' | 'http'): HostRule | undefined {
  const name = normalHost(host);
  return rules.find((rule) => rule.host === name && (rule.port ?? defaultPort(kind)) === port);
}

/** The first decision, on the name the command asked for (before any resolution). */
export function decideName(
  rules: readonly HostRule[],
  blocked: readonly Blocked[],
  host: string,
  port: number,
  kind: 'connect' | 'http',
): Decision {
  const name = normalHost(host);
  const store = blocked.find((b) => normalHost(b.host) === name && b.port === port);
  if (store !== undefined) return { allowed: false, host: name, port, reason: `${store.what} is never reachable from a command` };
  const rule = ruleFor(rules, name, port, kind);
  if (rule !== undefined) return { allowed: true, named: rule.named !== false };
  const hasHost = rules.some((rule) => rule.host === name);
  const reason = hasHost
    ? `port ${port} of ${name} is not allowed (only ${kind === 'connect' ? 'port 443' : 'port 80'} without a rule of its own: allow ${name}:${port})`
    : `${name} is not on the allowlist`;
  return { allowed: false, host: name, port, reason, ...(hasHost ? {} : { askable: true }) };
}

/** Parses an IPv4 address to its four numbers. */
function v4(address: string): number[] {
  return address.split('.').map(Number);
}

/** Why an IPv4 address is off limits without a rule naming its host (undefined: a public address). */
function v4Range(address: string): string | undefined {
  const [a, b] = v4(address) as [number, number];
  if (a === 127) return 'loopback';
  if (a === 0) return 'this-network';
  if (a === 169 && b === 254) return 'link-local (cloud metadata)';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'shared (carrier-grade NAT)';
  if (a >= 224) return 'multicast or reserved';
  return undefined;
}

/** Why an address is off limits without a rule naming its host: loopback, link-local, private, ...; undefined for a public one. */
export function restrictedRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) return v4Range(address);
  if (family !== 6) return 'not an address';
  const lower = address.toLowerCase();
  const mapped = /^(?:0{0,4}:){0,5}ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower.replace(/^::/, '0:0:0:0:0:'));
  if (mapped) return v4Range(mapped[1]!);
  if (lower === '::1' || lower === '::') return 'loopback';
  if (/^fe[89ab]/.test(lower)) return 'link-local';
  if (/^f[cd]/.test(lower)) return 'private (unique local)';
  if (/^ff/.test(lower)) return 'multicast';
  if (/^fec/.test(lower) || /^fe[def]/.test(lower)) return 'site-local';
  if (/^64:ff9b:/.test(lower)) return 'NAT64 (may reach a private address)';
  return undefined;
}

/**
 * The second decision, on the address the proxy would connect to (after resolution, so a name that
 * resolves to the host's loopback or a metadata address is caught): the store's address is always
 * refused; a restricted range only for a host the person named (not one approved at a prompt).
 */
export function decideAddress(
  address: string,
  port: number,
  host: string,
  named: boolean,
  blockedAddresses: readonly { address: string; port: number; what: string }[],
): Decision {
  const store = blockedAddresses.find((b) => b.address === address && b.port === port);
  const name = normalHost(host);
  if (store !== undefined) return { allowed: false, host: name, port, reason: `${store.what} is never reachable from a command` };
  const range = restrictedRange(address);
  if (range !== undefined && !named)
    return {
      allowed: false,
      host: name,
      port,
      reason: `${name} resolves to ${address}, a ${range} address: only a host the person named (--allow-host, user configuration) may reach one`,
    };
  return { allowed: true, named };
}
