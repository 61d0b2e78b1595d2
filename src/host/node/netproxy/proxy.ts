import { rmSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { request as httpRequest, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import { makeSocketDir } from './socket-dir';
import { decideAddress, decideName, normalHost, type Blocked, type Decision, type HostRule } from './policy';

// The proxy a sandboxed command's traffic leaves through (HTTP CONNECT and plain HTTP), run by the
// host outside the sandbox on a Unix socket in a folder only the person's user can open. The
// command's own network namespace has only its loopback; forwarder.ts relays from there to here.
// Every request is checked twice: on the name asked for (policy.decideName), then on each address
// that name resolves to (policy.decideAddress), and only a checked address is connected to.

/** Resolves a host name to its addresses (injectable: the tests resolve names without DNS). */
export type Resolver = (host: string) => Promise<string[]>;

export interface NetProxyOptions {
  /** The allowlist at the start; hosts approved later are added for the rest of the run. */
  readonly rules: readonly HostRule[];
  /** Never reachable, whatever was allowed (the PostgreSQL store's server). */
  readonly blocked?: readonly Blocked[];
  readonly resolve?: Resolver;
  /** Asks the person about a host not on the allowlist (once per host and port; none: refused). */
  readonly ask?: (host: string, port: number) => Promise<boolean>;
  /** How the person allows a refused host, for the refusal's text (e.g. "run again with --allow-host HOST"). */
  readonly howToAllow: (hostPort: string) => string;
}

export interface NetProxy {
  /** The Unix socket the forwarder in the sandbox connects to. */
  readonly socket: string;
  /** The allowlist now (the start's plus what was approved since), for the Timeline and messages. */
  rules(): readonly HostRule[];
  /** The refusals since the last call, one line each (for a command's result). */
  takeRefusals(): string[];
  /** Connections accepted so far, from any command or server: a command during which none came reached no host through the proxy. */
  connections(): number;
  /** Allows a host from now on (the person allowed a refused one): an earlier refusal of it is forgotten. */
  allow(rule: HostRule): void;
  close(): Promise<void>;
}

const defaultResolve: Resolver = async (host) =>
  isIP(host) !== 0 ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

const HOP_BY_HOP = ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade'];

/** Splits `host:port` / `[v6]:port` (a CONNECT target); undefined when it is not one. */
function splitTarget(target: string): { host: string; port: number } | undefined {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(target);
  const port = match ? Number(match[2]) : NaN;
  return match && port >= 1 && port <= 65535 ? { host: normalHost(match[1]!), port } : undefined;
}

class Proxy {
  private readonly rules: HostRule[];
  private readonly asked = new Map<string, Promise<boolean>>();
  private readonly refusals: string[] = [];
  private blockedAddresses: { address: string; port: number; what: string }[] = [];
  /** Open tunnels (CONNECT sockets leave the HTTP server's own count), ended by close. */
  readonly tunnels = new Set<Socket>();

  constructor(private readonly options: NetProxyOptions) {
    this.rules = [...options.rules];
  }

  allowlist(): readonly HostRule[] {
    return this.rules;
  }

  takeRefusals(): string[] {
    return this.refusals.splice(0, this.refusals.length);
  }

  allow(rule: HostRule): void {
    this.rules.push(rule);
    this.asked.delete(`${rule.host}:${rule.port ?? 443}`);
  }

  /** The store's addresses, resolved once at the start (a name checked again at each request too). */
  async resolveBlocked(): Promise<void> {
    const resolve = this.options.resolve ?? defaultResolve;
    for (const b of this.options.blocked ?? []) {
      const addresses = await resolve(b.host).catch(() => [] as string[]);
      for (const address of addresses) this.blockedAddresses.push({ address, port: b.port, what: b.what });
    }
  }

  /** The address to connect to, or the refusal: the name's decision (asking when it fits), then each resolved address's. */
  async decide(host: string, port: number, kind: 'connect' | 'http'): Promise<{ address: string } | Extract<Decision, { allowed: false }>> {
    let decision = decideName(this.rules, this.options.blocked ?? [], host, port, kind);
    if (!decision.allowed && decision.askable === true && (await this.approved(decision.host, port)))
      decision = decideName(this.rules, this.options.blocked ?? [], host, port, kind);
    if (!decision.allowed) return decision;
    const resolve = this.options.resolve ?? defaultResolve;
    let addresses: string[];
    try {
      addresses = await resolve(normalHost(host));
    } catch (error) {
      return { allowed: false, host, port, reason: `${host} could not be resolved (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    let first: Decision | undefined;
    for (const address of addresses) {
      const verdict = decideAddress(address, port, host, decision.named, this.blockedAddresses);
      if (verdict.allowed) return { address };
      first ??= verdict;
    }
    return first !== undefined && !first.allowed ? first : { allowed: false, host, port, reason: `${host} has no address` };
  }

  private approved(host: string, port: number): Promise<boolean> {
    const ask = this.options.ask;
    if (ask === undefined) return Promise.resolve(false);
    const key = `${host}:${port}`;
    let answer = this.asked.get(key);
    if (answer === undefined) {
      answer = ask(host, port)
        .catch(() => false)
        .then((yes) => {
          if (yes) this.rules.push({ host, port, source: 'approved during the run', named: false });
          return yes;
        });
      this.asked.set(key, answer);
    }
    return answer;
  }

  refusalText(refusal: Extract<Decision, { allowed: false }>): string {
    const target = refusal.port === 443 ? refusal.host : `${refusal.host}:${refusal.port}`;
    const line = `refused ${target}: ${refusal.reason}`;
    this.refusals.push(line);
    return `Agent Checkpoints network proxy: ${line}. ${this.options.howToAllow(target)}\n`;
  }

  async onConnect(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    this.tunnels.add(client);
    client.on('close', () => this.tunnels.delete(client));
    const target = splitTarget(req.url ?? '');
    if (target === undefined) return endRaw(client, 400, 'CONNECT needs host:port\n');
    const verdict = await this.decide(target.host, target.port, 'connect');
    if (!('address' in verdict)) return endRaw(client, 403, this.refusalText(verdict));
    const upstream = connect({ host: verdict.address, port: target.port, noDelay: true });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (client.writable && upstream.connecting) endRaw(client, 502, `could not connect to ${req.url} (${error.code ?? 'error'})\n`);
      else client.destroy();
    });
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    client.on('close', () => upstream.destroy());
  }

  async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return endResponse(res, 400, 'a proxy request names its whole URL (http://host/path)\n');
    }
    if (url.protocol !== 'http:')
      return endResponse(res, 400, `only http:// goes as a plain request; ${url.protocol} goes through CONNECT\n`);
    const port = url.port !== '' ? Number(url.port) : 80;
    const verdict = await this.decide(url.hostname, port, 'http');
    if (!('address' in verdict)) return endResponse(res, 403, this.refusalText(verdict));
    const headers = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    // The Host the server sees is the one that was checked (a different one could reach another site behind the same address).
    headers['host'] = url.host;
    const upstream = httpRequest({
      host: verdict.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (!res.headersSent) endResponse(res, 502, `could not reach ${url.host} (${error.code ?? 'error'})\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  }
}

function endRaw(client: Socket, status: number, text: string): void {
  const reason = status === 403 ? 'Forbidden' : status === 400 ? 'Bad Request' : 'Bad Gateway';
  const body = Buffer.from(text);
  client.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${text}`,
  );
}

function endResponse(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain', Connection: 'close' });
  res.end(text);
}

/** Starts the proxy on a fresh socket (its folder 0700, removed by close); it does not keep the process alive. */
export async function startNetProxy(options: NetProxyOptions): Promise<NetProxy> {
  const proxy = new Proxy(options);
  await proxy.resolveBlocked();
  const { dir, socket } = await makeSocketDir();
  const server: Server = createServer((req, res) => void proxy.onRequest(req, res));
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => void proxy.onConnect(req, client, head));
  server.on('clientError', (_error, client: Socket) => client.destroy());
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  server.unref();
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);
  return {
    socket,
    rules: () => proxy.allowlist(),
    takeRefusals: () => proxy.takeRefusals(),
    connections: () => connections,
    allow: (rule) => proxy.allow(rule),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const tunnel of proxy.tunnels) tunnel.destroy();
        server.close(() => {
          process.removeListener('exit', cleanup);
          cleanup();
          resolve();
        });
      }),
  };
}
