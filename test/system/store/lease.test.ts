import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileStore } from '../../../src/host/node/store-factory';
import { leaseOf, runInput } from '../../unit/store/fixtures';

const CHILD = join(__dirname, 'lease-child.ts');

function child(root: string, runId: string, mode: 'hold' | 'die', timeoutMs: number, startAt = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const args = ['--import', 'tsx', CHILD, root, runId, mode, String(timeoutMs), String(startAt)];
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', () => resolve(out.trim()));
  });
}

/** A child that holds the run: resolves once it has won and written its first note. */
function holder(root: string, runId: string, timeoutMs: number): Promise<{ proc: ChildProcess; done: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, root, runId, 'long', String(timeoutMs), '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    const done = new Promise<string>((r) => proc.on('exit', () => r(out.trim())));
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith('WON')) resolve({ proc, done });
      else if (out.includes('\n')) reject(new Error(out));
    });
    proc.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('lease across processes', function () {
  this.timeout(30_000);
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-lease-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('two processes racing for one run: exactly one writes', async () => {
    const store = openFileStore(root);
    await (await store.createRun(runInput('r1'))).close();
    const startAt = Date.now() + 2500;
    const results = await Promise.all([child(root, 'r1', 'hold', 15_000, startAt), child(root, 'r1', 'hold', 15_000, startAt)]);
    assert.deepEqual(results.map((r) => (r.startsWith('WON') ? 'WON' : r)).sort(), ['LEASE_HELD', 'WON'], results.join(' | '));
    const notes = (await store.readRun('r1')).notes.map((n) => n.text);
    assert.equal(notes.length, 2);
    assert.equal(notes[1], `${notes[0]} again`);
  });

  it('a crashed holder (dead pid on this host) is taken over at once, a live one is not', async () => {
    const store = openFileStore(root);
    await (await store.createRun(runInput('r1'))).close();
    assert.match(await child(root, 'r1', 'die', 60_000), /^WON/);
    const dead = leaseOf(store, 'r1');
    assert.ok(dead, 'the dead child left its lease');
    const live = await store.openWriter('r1').catch((e: unknown) => e);
    assert.equal((live as { code?: string }).code, undefined, 'dead pid on the same host is stale at once');
    assert.equal(await child(root, 'r1', 'hold', 60_000), 'LEASE_HELD', 'this live process keeps it');
  });

  it('a holder in a call 4x longer than the lease timeout keeps the run: another host is refused, naming it; it then writes', async () => {
    const store = openFileStore(root);
    await (await store.createRun(runInput('r1'))).close();
    const { proc, done } = await holder(root, 'r1', 1000);
    await sleep(2500); // well past the 1 s lease timeout: the time is what is tested
    const elsewhere = openFileStore(root, {
      leaseTimeoutMs: 1000,
      process: { pid: process.pid, hostname: 'elsewhere', isAlive: () => true },
    });
    const refused = await elsewhere.openWriter('r1').catch((e: unknown) => e);
    assert.equal((refused as { code?: string }).code, 'lease_held', String(refused));
    assert.match((refused as Error).message, new RegExp(`pid ${proc.pid} on `));
    const sameHost = await openFileStore(root, { leaseTimeoutMs: 1000 })
      .openWriter('r1')
      .catch((e: unknown) => e);
    assert.equal((sameHost as { code?: string }).code, 'lease_held', 'a live holder on this host is not taken over');
    assert.match(await done, /^WON /);
    const notes = (await store.readRun('r1')).notes.map((n) => n.text);
    assert.deepEqual(notes, [`writer ${proc.pid}`, `writer ${proc.pid} again`]);
  });

  it('kill -9 of the holder mid-call: another process takes over at once, and the dead one wrote nothing more', async () => {
    const store = openFileStore(root, { leaseTimeoutMs: 60_000 });
    await (await store.createRun(runInput('r1'))).close();
    const { proc, done } = await holder(root, 'r1', 60_000);
    proc.kill('SIGKILL');
    await done;
    const began = Date.now();
    const taker = await store.openWriter('r1');
    assert.ok(Date.now() - began < 10_000, 'taken over well within the 60 s expiry');
    await taker.append([{ type: 'note', kind: 'info', text: 'the taker' }]);
    await taker.close();
    const notes = (await store.readRun('r1')).notes.map((n) => n.text);
    assert.deepEqual(notes, [`writer ${proc.pid}`, 'the taker']);
  });
});
