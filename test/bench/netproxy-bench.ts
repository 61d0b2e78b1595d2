// The allowlist network's figures for bench:sandbox: what the proxy (and the forwarder in the
// sandbox) add to a 1 MB download from an allowed loopback test server, measured by curl's own
// clock inside one command (no process start counted), against the same download by curl on the
// host straight from the server; and a command's start with the forwarder against today's (the
// network on, no forwarder). Only loopback servers this bench makes are used.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { CommandRunner } from '../../src/core/ports';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { startNetProxy, type NetProxy } from '../../src/host/node/netproxy/index';
import { sandboxRequest } from '../../src/host/node/agent-host/commands';

const MEGABYTE = Buffer.alloc(1024 * 1024, 7);
const DOWNLOADS = Number(process.env.SANDBOX_BENCH_DOWNLOADS ?? 40);
/** The downloads are made in rounds, direct, proxied and tunnelled in turn, so a load that comes and goes weighs on all three alike. */
const ROUNDS = 8;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 100) / 100;
}

/** `curl` fetching the megabyte `count` times in one command; each download's time in ms, by curl's clock. */
async function downloads(runner: CommandRunner, cwd: string, url: string, extra: string, count: number): Promise<number[]> {
  const command = `for i in $(seq ${count}); do curl -sS ${extra} -o /dev/null -w '%{time_total}\\n' '${url}' || exit 1; done`;
  const result = await runner.run(command, { cwd, timeoutMs: 120_000, maxOutputBytes: 64 * 1024 });
  if (result.exitCode !== 0) throw new Error(`the downloads failed: ${result.stdout}${result.stderr}${result.sandboxNote ?? ''}`);
  return result.stdout
    .trim()
    .split('\n')
    .map((s) => Number(s) * 1000);
}

async function startTimed(runner: CommandRunner, cwd: string): Promise<number> {
  const start = performance.now();
  const result = await runner.run('true', { cwd, timeoutMs: 10_000, maxOutputBytes: 1024 });
  if (result.exitCode !== 0) throw new Error(`true failed: ${JSON.stringify(result)}`);
  return performance.now() - start;
}

export interface NetFigures {
  readonly download_1mb_ms_p50_direct: number;
  readonly download_1mb_ms_p50_through_proxy: number;
  readonly proxy_added_ms_p50_1mb: number;
  readonly download_1mb_ms_p50_connect_tunnel: number;
  readonly proxy_added_ms_p50_1mb_connect: number;
  readonly target_proxy_added_ms: number;
  readonly command_ms_p50_network_on: number;
  readonly command_ms_p50_allowlist: number;
  readonly forwarder_start_ms_p50: number;
  readonly forwarder: string;
}

/** The figures, in the workspace `ws` (the store `store` hidden as the hosts do). */
export async function netFigures(ws: string, store: string, runs: number): Promise<NetFigures> {
  const server: Server = createServer((_req, res) => res.end(MEGABYTE));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  const proxy: NetProxy = await startNetProxy({
    rules: [{ host: 'bench.test', port, source: 'bench' }],
    resolve: async (host) => (host === 'bench.test' ? ['127.0.0.1'] : []),
    howToAllow: () => '',
  });
  try {
    const plain = createNodeCommandRunner();
    const today = createNodeCommandRunner({
      sandbox: () => sandboxRequest({ sandbox: 'auto', network: 'on' }, { roots: [ws], store: { kind: 'files', dir: store } }),
    });
    const allowlist = createNodeCommandRunner({
      sandbox: () =>
        sandboxRequest({ sandbox: 'auto', network: 'allowlist' }, { roots: [ws], store: { kind: 'files', dir: store } }, proxy),
    });
    const direct: number[] = [];
    const proxied: number[] = [];
    const tunnel: number[] = [];
    const perRound = Math.max(1, Math.round(DOWNLOADS / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
      direct.push(...(await downloads(plain, ws, `http://127.0.0.1:${port}/`, "--noproxy '*'", perRound)));
      proxied.push(...(await downloads(allowlist, ws, `http://bench.test:${port}/`, '', perRound)));
      tunnel.push(...(await downloads(allowlist, ws, `http://bench.test:${port}/`, '--proxytunnel', perRound)));
    }
    const onMs: number[] = [];
    const allowMs: number[] = [];
    await startTimed(today, ws);
    await startTimed(allowlist, ws);
    for (let i = 0; i < runs; i++) {
      onMs.push(await startTimed(today, ws));
      allowMs.push(await startTimed(allowlist, ws));
    }
    const [d, p, t, on, allow] = [median(direct), median(proxied), median(tunnel), median(onMs), median(allowMs)];
    return {
      download_1mb_ms_p50_direct: d,
      download_1mb_ms_p50_through_proxy: p,
      proxy_added_ms_p50_1mb: Math.round((p - d) * 100) / 100,
      download_1mb_ms_p50_connect_tunnel: t,
      proxy_added_ms_p50_1mb_connect: Math.round((t - d) * 100) / 100,
      target_proxy_added_ms: 5,
      command_ms_p50_network_on: on,
      command_ms_p50_allowlist: allow,
      forwarder_start_ms_p50: Math.round((allow - on) * 10) / 10,
      forwarder: (await import('../../src/host/node/netproxy/forwarder')).forwarderProgram().program,
    };
  } finally {
    await proxy.close();
    await new Promise<void>((done) => server.close(() => done()));
  }
}
