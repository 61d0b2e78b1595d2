import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { startNetProxy } from '../../../src/host/node/netproxy/index';
import { makeSocketDir, sweepSocketDirs } from '../../../src/host/node/netproxy/socket-dir';
import { tempDir } from '../../unit/runtime/harness';

// A host killed while its proxy listened leaves the proxy's socket folder behind (nothing runs its
// cleanup): the next proxy removes it, and never one whose socket still answers.

/** A socket folder whose listener was killed with SIGKILL: the socket file stays, nothing listens. */
async function killedListener(base: string, name: string): Promise<string> {
  const dir = join(base, name);
  mkdirSync(dir);
  const socket = join(dir, 'proxy.sock');
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socket)}, () => console.log('up'))`]);
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.kill('SIGKILL');
  await new Promise<void>((resolve) => child.once('exit', () => resolve()));
  assert.ok(existsSync(socket), 'the killed listener left its socket file');
  return dir;
}

describe('the proxy socket folders of killed hosts are swept', function () {
  this.timeout(20_000);
  let base: string;
  let live: Server | undefined;
  beforeEach(() => (base = tempDir('sweep')));
  afterEach(async () => {
    await new Promise<void>((resolve) => (live ? live.close(() => resolve()) : resolve()));
    live = undefined;
    rmSync(base, { recursive: true, force: true });
  });

  it('removes a dead socket folder and an old empty one; keeps a live one, a young empty one and other names', async () => {
    const dead = await killedListener(base, 'ac-netproxy-dead01');
    const liveDir = join(base, 'ac-netproxy-live01');
    mkdirSync(liveDir);
    live = createServer();
    await new Promise<void>((resolve) => live!.listen(join(liveDir, 'proxy.sock'), resolve));
    const young = join(base, 'ac-netproxy-young1');
    mkdirSync(young);
    const old = join(base, 'ac-netproxy-old001');
    mkdirSync(old);
    const hourAgo = (Date.now() - 3_600_000) / 1000;
    utimesSync(old, hourAgo, hourAgo);
    mkdirSync(join(base, 'unrelated'));
    assert.equal(await sweepSocketDirs(base), 2);
    assert.deepEqual(readdirSync(base).sort(), ['ac-netproxy-live01', 'ac-netproxy-young1', 'unrelated']);
    assert.ok(!existsSync(dead));
  });

  it('a new proxy sweeps first, and its own folder is gone after close', async () => {
    await killedListener(base, 'ac-netproxy-dead02');
    const made = await makeSocketDir(base);
    assert.deepEqual(readdirSync(base), [made.dir.slice(base.length + 1)]);
    rmSync(made.dir, { recursive: true });
    const proxy = await startNetProxy({ rules: [], howToAllow: () => '' });
    assert.ok(existsSync(proxy.socket));
    await proxy.close();
    assert.ok(!existsSync(join(proxy.socket, '..')), 'closing removes the folder');
  });
});
