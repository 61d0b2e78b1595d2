import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileStore } from '../../../src/host/node/store-factory';
import { runInput } from './fixtures';

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
    const dead = await store.lease('r1');
    assert.ok(dead, 'the dead child left its lease');
    const live = await store.openWriter('r1').catch((e: unknown) => e);
    assert.equal((live as { code?: string }).code, undefined, 'dead pid on the same host is stale at once');
    assert.equal(await child(root, 'r1', 'hold', 60_000), 'LEASE_HELD', 'this live process keeps it');
  });
});
