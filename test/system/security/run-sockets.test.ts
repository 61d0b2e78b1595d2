import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { runKeeps } from '../../../src/host/node/sandbox/bwrap';
import { detectSandbox } from '../../../src/host/node/sandbox/index';
import { tempDir } from '../../unit/runtime/harness';

const hasBwrap = detectSandbox().kind === 'bwrap';

/** Connects to a Unix socket with the running Node; prints "connected" or the error's code. */
const probe = (socket: string): string =>
  `'${process.execPath}' -e 'const s=require("net").connect(process.argv[1]);s.on("connect",()=>{console.log("connected");s.end()});s.on("error",e=>console.log(e.code))' '${socket}'`;

describe("the host's Unix sockets under /run are out of a sandboxed command's reach", function () {
  this.timeout(30_000);
  let ws = '';
  let runDir = '';
  let server: Server | undefined;

  before(function () {
    // The test makes a folder in /run (as root here) and needs bubblewrap.
    if (!hasBwrap || !existsSync('/run')) this.skip();
    try {
      runDir = mkdtempSync('/run/ac-sockets-');
    } catch {
      this.skip();
    }
  });
  beforeEach(() => {
    ws = tempDir('run-sockets');
  });
  afterEach(async () => {
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    server = undefined;
    rmSync(ws, { recursive: true, force: true });
  });
  after(() => {
    if (runDir !== '') rmSync(runDir, { recursive: true, force: true });
  });

  function runner(sandboxed: boolean) {
    return createNodeCommandRunner({
      env: { PATH: process.env['PATH'], HOME: join(ws, 'home') },
      ...(sandboxed
        ? {
            sandbox: () => ({
              roots: [ws],
              protectedPaths: [],
              hidden: [],
              homePaths: [],
              network: false,
              home: join(ws, 'home'),
              programDirs: [dirname(process.execPath)],
            }),
          }
        : {}),
    });
  }

  it('a listener on a socket the test makes in /run answers an unsandboxed command, not a sandboxed one with the network off', async () => {
    const socket = join(runDir, 'db.sock');
    server = createServer((conn) => conn.end());
    await new Promise<void>((done) => server!.listen(socket, done));
    const options = { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 8192 };
    const plain = await runner(false).run(probe(socket), options);
    assert.equal(plain.stdout.trim(), 'connected', `the probe itself works: ${formatCommandResult(plain)}`);
    const boxed = await runner(true).run(probe(socket), options);
    assert.equal(boxed.exitCode, 0, formatCommandResult(boxed));
    assert.equal(boxed.stdout.trim(), 'ENOENT', formatCommandResult(boxed));
    const listing = await runner(true).run(`ls -A /run; test -e '${runDir}' && echo visible || echo hidden`, options);
    const names = listing.stdout.trim().split('\n');
    assert.equal(names.pop(), 'hidden', formatCommandResult(listing));
    for (const host of ['postgresql', 'dbus', 'docker.sock', 'containerd', 'podman', 'user', basename(runDir)])
      assert.ok(!names.includes(host), `/run/${host} is visible: ${names.join(' ')}`);
  });

  it("what a command needs back from /run: resolv.conf's target there, and PATH's program folders there", () => {
    const link = join(ws, 'resolv.conf');
    const target = join(runDir, 'stub-resolv.conf');
    writeFileSync(target, 'nameserver 127.0.0.53\n');
    symlinkSync(target, link);
    assert.deepEqual(runKeeps(link, '/usr/bin:/run/current-system/sw/bin:relative/run'), ['/run/current-system/sw/bin', target]);
    mkdirSync(join(ws, 'etc'));
    writeFileSync(join(ws, 'etc', 'resolv.conf'), 'nameserver 10.0.0.1\n');
    assert.deepEqual(runKeeps(join(ws, 'etc', 'resolv.conf'), '/usr/bin'), []);
  });
});
