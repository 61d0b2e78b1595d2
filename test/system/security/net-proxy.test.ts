import { strict as assert } from 'node:assert';
import { readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { startNetProxy, storeReach, type HostRule, type NetProxy } from '../../../src/host/node/netproxy/index';
import { detectSandbox } from '../../../src/host/node/sandbox/index';
import { postgresBinDir, testPostgres } from '../../support/pg-server';
import { tempDir } from '../../unit/runtime/harness';

const hasBwrap = detectSandbox().kind === 'bwrap';

/** Names the tests resolve without DNS: each to the host's loopback (the only server the tests may use). */
const NAMES: Record<string, string[]> = {
  'allowed.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'asked.test': ['127.0.0.1'],
  'tls.test': ['127.0.0.1'],
};
const resolve = async (host: string): Promise<string[]> => {
  if (/^[\d.]+$/.test(host)) return [host];
  const found = NAMES[host];
  if (found === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return found;
};

/** Connects to a host TCP port or a Unix socket from inside the command; prints "connected" or the error's code. */
const probe = (target: string): string =>
  `'${process.execPath}' -e 'const [h,p]=process.argv[1].split(" ");const s=require("net").connect(p?{host:h,port:+p}:h);s.on("connect",()=>{console.log("connected");s.end()});s.on("error",e=>console.log(e.code))' '${target}'`;

describe('the network of a sandboxed command goes through the allowlist proxy', function () {
  this.timeout(60_000);
  let ws = '';
  let web: Server;
  let port = 0;
  let proxy: NetProxy | undefined;
  const asked: string[] = [];

  before(async function () {
    if (!hasBwrap) this.skip();
    web = createServer((req, res) => res.end(`hello from ${req.headers.host}\n`));
    await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
    port = (web.address() as AddressInfo).port;
  });
  after(async () => {
    if (web !== undefined) await new Promise<void>((done) => web.close(() => done()));
  });
  beforeEach(() => {
    ws = tempDir('net-proxy');
    asked.length = 0;
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    rmSync(ws, { recursive: true, force: true });
  });

  async function withProxy(rules: HostRule[], blocked: { host: string; port: number; what: string }[] = []): Promise<NetProxy> {
    proxy = await startNetProxy({
      rules,
      blocked,
      resolve,
      ask: async (host, p) => {
        asked.push(`${host}:${p}`);
        return host === 'asked.test';
      },
      howToAllow: (host) => `allow with --allow-host ${host}`,
    });
    return proxy;
  }

  async function run(command: string, net: NetProxy | undefined) {
    const runner = createNodeCommandRunner({
      env: { PATH: process.env['PATH'], HOME: join(ws, 'home') },
      sandbox: () => ({
        roots: [ws],
        protectedPaths: [],
        hidden: [],
        homePaths: [],
        network: false,
        ...(net !== undefined ? { proxy: net } : {}),
        home: join(ws, 'home'),
        programDirs: [dirname(process.execPath)],
      }),
    });
    const result = await runner.run(command, { cwd: ws, timeoutMs: 20_000, maxOutputBytes: 64 * 1024 });
    return { ...result, text: formatCommandResult(result) };
  }

  const curl = (url: string, extra = ''): string => `curl -sS --max-time 10 ${extra} -o - -w '\\n%{http_code}\\n' '${url}' 2>&1; true`;

  it('an allowed host answers through the proxy; a host not on the list is refused and named in the result', async () => {
    const net = await withProxy([{ host: 'allowed.test', port, source: 'test' }]);
    const ok = await run(curl(`http://allowed.test:${port}/`), net);
    assert.match(ok.stdout, new RegExp(`hello from allowed.test:${port}\\n\\n200`), ok.text);
    const fronted = await run(curl(`http://allowed.test:${port}/`, "-H 'Host: other.test'"), net);
    assert.match(fronted.stdout, new RegExp(`hello from allowed.test:${port}\\n`), 'the server sees the Host that was checked');
    const refused = await run(curl(`http://other.test:${port}/`), net);
    assert.match(refused.stdout, /other\.test.*not on the allowlist[\s\S]*403/, refused.text);
    assert.match(refused.sandboxNote ?? '', /refused other\.test:\d+: other\.test is not on the allowlist/, refused.text);
  });

  it("a listener on the host's loopback is unreachable from a command: directly (its own loopback) and through the proxy", async () => {
    const net = await withProxy([{ host: 'allowed.test', port, source: 'test' }]);
    const direct = await run(probe(`127.0.0.1 ${port}`), net);
    assert.equal(direct.stdout.trim(), 'ECONNREFUSED', direct.text);
    // The command's own loopback goes direct (NO_PROXY); --noproxy '' sends it to the proxy all the same.
    const viaProxy = await run(curl(`http://127.0.0.1:${port}/`, "--noproxy ''"), net);
    assert.match(viaProxy.stdout, /127\.0\.0\.1 is not on the allowlist[\s\S]*403/, viaProxy.text);
  });

  it('a name approved during the run that resolves to a loopback address is refused (DNS rebinding); a named one is not', async () => {
    const net = await withProxy([{ host: 'allowed.test', port, source: 'test' }]);
    const rebound = await run(curl(`http://asked.test:${port}/`), net);
    assert.deepEqual(asked, [`asked.test:${port}`]);
    assert.match(rebound.stdout, /asked\.test resolves to 127\.0\.0\.1, a loopback address[\s\S]*403/, rebound.text);
    const again = await run(curl(`http://asked.test:${port}/`), net);
    assert.match(again.stdout, /403/, again.text);
    assert.deepEqual(asked, [`asked.test:${port}`], 'asked once per host and port');
    const named = await run(curl(`http://allowed.test:${port}/`), net);
    assert.match(named.stdout, /200\n$/, named.text);
  });

  it('CONNECT to a port other than 443 is refused without a rule of its own, and passes with one', async () => {
    const plain = await withProxy([{ host: 'tls.test', source: 'test' }]);
    const refused = await run(curl(`http://tls.test:${port}/`, '--proxytunnel'), plain);
    assert.match(refused.stdout, /CONNECT tunnel failed, response 403|403/, refused.text);
    assert.match(refused.sandboxNote ?? '', /port \d+ of tls\.test is not allowed/, refused.text);
    await plain.close();
    const withPort = await withProxy([{ host: 'tls.test', port, source: 'test' }]);
    const tunnel = await run(curl(`http://tls.test:${port}/`, '--proxytunnel'), withPort);
    assert.match(tunnel.stdout, /hello from tls\.test:\d+\n\n200/, tunnel.text);
  });

  it('without a proxy (the network off) nothing leaves: no forwarder, no proxy variables', async () => {
    const result = await run(`echo "[$HTTPS_PROXY]"; ${curl(`http://127.0.0.1:${port}/`)}`, undefined);
    assert.match(result.stdout, /^\[\]\n/, result.text);
    assert.match(result.stdout, /000/, result.text);
  });

  describe('the PostgreSQL store', function () {
    before(function () {
      if (postgresBinDir() === null && process.env['AGENT_CHECKPOINTS_TEST_PG'] === undefined) this.skip();
    });

    it('is refused by the proxy even where its host and port are allowed by name, and unreachable directly', async () => {
      const pg = await testPostgres();
      const address = new URL(pg.url);
      const pgPort = Number(address.port);
      const { blocked } = storeReach(pg.url, {});
      assert.deepEqual(blocked, [{ host: address.hostname, port: pgPort, what: 'the run store (PostgreSQL)' }]);
      const net = await withProxy([{ host: address.hostname, port: pgPort, source: 'test' }], blocked);
      const tunnel = await run(curl(`http://${address.hostname}:${pgPort}/`, "--proxytunnel --noproxy ''"), net);
      assert.match(tunnel.stdout, /403/, tunnel.text);
      assert.match(tunnel.sandboxNote ?? '', /the run store \(PostgreSQL\) is never reachable from a command/, tunnel.text);
      const direct = await run(probe(`${address.hostname} ${pgPort}`), net);
      assert.equal(direct.stdout.trim(), 'ECONNREFUSED', direct.text);
    });

    it('by its Unix socket neither (the socket folder is out of sight)', async function () {
      const pg = await testPostgres();
      const pgPort = new URL(pg.url).port;
      const dir = readdirSync(tmpdir()).find(
        (name) => name.startsWith('ac-pg-') && readdirSync(join(tmpdir(), name)).includes(`.s.PGSQL.${pgPort}`),
      );
      if (dir === undefined) this.skip();
      const socket = join(tmpdir(), dir!, `.s.PGSQL.${pgPort}`);
      const plain = await new Promise<string>((done) => {
        const c = connect(socket);
        c.on('connect', () => (c.end(), done('connected')));
        c.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? 'error'));
      });
      assert.equal(plain, 'connected', 'the socket answers outside the sandbox');
      const boxed = await run(probe(socket), await withProxy([]));
      assert.equal(boxed.stdout.trim(), 'ENOENT', boxed.text);
    });
  });
});
