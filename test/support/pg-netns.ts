import { spawnSync } from 'node:child_process';
import { createConnection, createServer, type Server } from 'node:net';
import type { WorkerNetwork } from './pg-kill-harness';
import { startPostgres, type TestPostgres } from './pg-server';

// Workers in network namespaces of their own (`ip netns`, root only), each reaching the host over
// a veth pair: PostgreSQL listens on the host end of every pair (its own throwaway server, which
// trusts the pairs' subnet), the fake model is relayed there by a TCP relay. The names carry this
// process's id, and everything is removed on close (the namespaces are the machine's, not ours).

const ip = (args: readonly string[]) => spawnSync('ip', args, { encoding: 'utf8' });

/** Why workers cannot run in network namespaces here (one line), or null when they can. */
export function netnsUnavailable(): string | null {
  if (process.platform !== 'linux') return `network namespaces are Linux only (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return '`ip netns add` needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN); the tests do not run as root';
  const probe = `ac-probe-${process.pid}`;
  const added = ip(['netns', 'add', probe]);
  if (added.error) return `the \`ip\` command is not installed (${added.error.message})`;
  if (added.status !== 0) return `\`ip netns add\` fails here: ${added.stderr.trim().split('\n')[0]}`;
  ip(['netns', 'del', probe]);
  return null;
}

export interface NetnsNetwork extends WorkerNetwork {
  close(): Promise<void>;
}

function must(args: readonly string[]): void {
  const result = ip(args);
  if (result.status !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr.trim()}`);
}

/** `slots` namespaces, one veth pair each (10.235.<k>.0/30: .1 the host end, .2 the namespace's). */
export async function startNetnsNetwork(slots: number): Promise<NetnsNetwork> {
  const base = (process.pid % 60) * 4;
  const pairs = Array.from({ length: slots }, (_, i) => ({
    ns: `ac-${process.pid}-${i}`,
    host: `acw${process.pid % 100_000}h${i}`,
    peer: `acw${process.pid % 100_000}n${i}`,
    hostIp: `10.235.${base + i}.1`,
    nsIp: `10.235.${base + i}.2`,
  }));
  const relays: Server[] = [];
  let server: TestPostgres | undefined;
  const close = async () => {
    for (const relay of relays) relay.close();
    await server?.stop?.();
    for (const pair of pairs) {
      ip(['link', 'del', pair.host]);
      ip(['netns', 'del', pair.ns]);
    }
  };
  try {
    for (const pair of pairs) {
      must(['netns', 'add', pair.ns]);
      must(['link', 'add', pair.host, 'type', 'veth', 'peer', 'name', pair.peer]);
      must(['link', 'set', pair.peer, 'netns', pair.ns]);
      must(['addr', 'add', `${pair.hostIp}/30`, 'dev', pair.host]);
      must(['link', 'set', pair.host, 'up']);
      must(['-n', pair.ns, 'addr', 'add', `${pair.nsIp}/30`, 'dev', pair.peer]);
      must(['-n', pair.ns, 'link', 'set', pair.peer, 'up']);
      must(['-n', pair.ns, 'link', 'set', 'lo', 'up']);
    }
    server = await startPostgres({ listen: pairs.map((p) => p.hostIp), trust: '10.235.0.0/16' });
  } catch (error) {
    await close();
    throw error;
  }
  const relayed = new Map<string, number>();
  /** A relay on the host end of pair `slot` to 127.0.0.1:port (same port), started once. */
  const relay = async (slot: number, port: number): Promise<void> => {
    const key = `${slot}:${port}`;
    if (relayed.has(key)) return;
    relayed.set(key, port);
    const listener = createServer((socket) => {
      const upstream = createConnection({ host: '127.0.0.1', port });
      socket.pipe(upstream).pipe(socket);
      const end = () => (socket.destroy(), upstream.destroy());
      socket.on('error', end);
      upstream.on('error', end);
    });
    relays.push(listener);
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, pairs[slot]!.hostIp, () => resolve());
    });
  };
  return {
    server,
    command: (slot, node) => ({ program: 'ip', args: ['netns', 'exec', pairs[slot]!.ns, process.execPath, ...node] }),
    async reach(slot, url) {
      const address = new URL(url);
      if (address.protocol.startsWith('postgres')) {
        address.hostname = pairs[slot]!.hostIp;
        return address.toString();
      }
      await relay(slot, Number(address.port));
      address.hostname = pairs[slot]!.hostIp;
      return address.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
    },
    close,
  };
}
