import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import { replaceFileAtomic } from '../../../src/core/store/atomic-file';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { FileBusyError, PlatformFs, RETRY_DELAYS_MS, type Platform } from '../../../src/host/node/platform-fs';
import { FlakyCalls, type FlakyPlan } from '../../support/faults/flaky-calls';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const FAST = [1, 2, 4, 8, 16];

describe('faults: one platform layer for file operations (Windows branch proven on any platform)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ac-pfs-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function workspace(platform: Platform, calls: FlakyCalls, retryDelaysMs = FAST): NodeWorkspace {
    return new NodeWorkspace({ roots: [root], platformFs: new PlatformFs({ platform, calls, retryDelaysMs }) });
  }

  it('win32: no folder is fsynced; an edit, a create and a delete succeed where a folder fsync is refused (EPERM)', async () => {
    const calls = new FlakyCalls([], true);
    const ws = workspace('win32', calls);
    writeFileSync(join(root, 'a.txt'), 'one\n');
    const live = await ws.read('a.txt');
    await ws.write('a.txt', utf8('two\n'), live!.hash);
    await ws.write('new/b.txt', utf8('b\n'), ABSENT);
    await ws.delete('new/b.txt', hashContent(utf8('b\n')));
    assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'two\n');
    assert.equal(calls.count(/^fsync folder/), 0, calls.log.join('\n'));
    // The file is flushed on its own handle before the rename.
    const fsyncAt = calls.log.findIndex((line) => line.startsWith('fsync file') && line.endsWith('.tmp'));
    const renameAt = calls.log.indexOf(`rename ${join(root, 'a.txt')}`);
    assert.ok(fsyncAt >= 0 && renameAt > fsyncAt, calls.log.join('\n'));
  });

  it('linux with the same Windows-strict folder fsync: the edit fails (the platform decides, not the fake)', async () => {
    const ws = workspace('linux', new FlakyCalls([], true));
    await assert.rejects(ws.write('c.txt', utf8('c\n'), ABSENT), /EPERM/);
    // A host that is Windows (Node for Windows under Wine) refuses a real folder fsync: the point of this layer.
    if (process.platform === 'win32') return;
    const calls = new FlakyCalls();
    await workspace('linux', calls).write('d.txt', utf8('d\n'), ABSENT);
    assert.equal(calls.count(/^fsync folder/), 1);
  });

  it('the store on win32: replaceFileAtomic attempts no folder fsync, so a refused one cannot fail it', async () => {
    const calls = new FlakyCalls([], true);
    await replaceFileAtomic(new NodeStoreFs(new PlatformFs({ platform: 'win32', calls })), root, 'state.json', '{"a":1}');
    assert.equal(readFileSync(join(root, 'state.json'), 'utf8'), '{"a":1}');
    assert.equal(calls.count(/^fsync folder/), 0);
    await assert.rejects(replaceFileAtomic(new NodeStoreFs(new PlatformFs({ platform: 'linux', calls })), root, 's.json', '{}'), /EPERM/);
  });

  const brief: [FlakyPlan['op'], FlakyPlan['code']][] = [
    ['rename', 'EBUSY'],
    ['rename', 'EPERM'],
    ['open', 'EACCES'],
    ['unlink', 'EBUSY'],
  ];
  for (const [op, code] of brief) {
    it(`win32: ${code} on ${op} for an instant (twice) is retried and the edit and delete succeed; on linux it fails at once`, async () => {
      writeFileSync(join(root, 'e.txt'), 'e\n');
      const plan: FlakyPlan = { op, code, times: 2, pathIncludes: 'e.txt' };
      const calls = new FlakyCalls([plan]);
      const ws = workspace('win32', calls);
      const live = await ws.read('e.txt');
      await ws.write('e.txt', utf8('E\n'), live!.hash);
      assert.equal(readFileSync(join(root, 'e.txt'), 'utf8'), 'E\n');
      await ws.delete('e.txt', hashContent(utf8('E\n')));
      assert.deepEqual(readdirSync(root), []);
      assert.ok(calls.count(new RegExp(`^${op} .*e\\.txt`)) >= 3, calls.log.join('\n'));
      if (process.platform === 'win32') return; // the POSIX branch fsyncs a real folder, which a Windows host refuses
      writeFileSync(join(root, 'e.txt'), 'e\n');
      const linux = workspace('linux', new FlakyCalls([plan]));
      const attempt = async (): Promise<void> => {
        const now = await linux.read('e.txt');
        await linux.write('e.txt', utf8('E\n'), now!.hash);
        await linux.delete('e.txt', hashContent(utf8('E\n')));
      };
      await assert.rejects(attempt(), (error: NodeJS.ErrnoException) => error.code === code && !(error instanceof FileBusyError));
    });
  }

  it('win32: a lasting refusal is an error in words naming the file; the file is untouched and no temp is left', async () => {
    writeFileSync(join(root, 'held.txt'), 'held\n');
    const ws = workspace('win32', new FlakyCalls([{ op: 'rename', code: 'EACCES', times: Infinity }]));
    const live = await ws.read('held.txt');
    await assert.rejects(ws.write('held.txt', utf8('x'), live!.hash), (error: unknown) => {
      assert.ok(error instanceof FileBusyError, String(error));
      assert.equal(error.code, 'EACCES');
      assert.match(error.message, /could not rename .*held\.txt: refused \(EACCES\) 6 times over 31 ms; another program/);
      return true;
    });
    assert.equal(readFileSync(join(root, 'held.txt'), 'utf8'), 'held\n');
    assert.deepEqual(readdirSync(root), ['held.txt']);
  });

  it('the store on win32: a busy rename and unlink are retried, a lasting one names the file', async () => {
    const calls = new FlakyCalls([
      { op: 'rename', code: 'EBUSY', times: 3 },
      { op: 'unlink', code: 'EPERM', times: Infinity },
    ]);
    const fs = new NodeStoreFs(new PlatformFs({ platform: 'win32', calls, retryDelaysMs: FAST }));
    await replaceFileAtomic(fs, root, 'state.json', '{"b":2}');
    assert.equal(readFileSync(join(root, 'state.json'), 'utf8'), '{"b":2}');
    await assert.rejects(fs.unlink(join(root, 'state.json')), /could not unlink .*state\.json: refused \(EPERM\)/);
  });

  it('the default backoff waits a few hundred ms in all', () => {
    const total = RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0);
    assert.ok(total >= 200 && total <= 500, `${total} ms`);
    assert.ok(
      RETRY_DELAYS_MS.every((ms, i) => i === 0 || ms > RETRY_DELAYS_MS[i - 1]!),
      'each wait longer than the last',
    );
  });
});
