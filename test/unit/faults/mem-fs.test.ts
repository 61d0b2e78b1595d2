import * as assert from 'node:assert/strict';
import { CrashingFs, isPowerLoss, MemStoreFs } from '../../support/faults/crashing-fs';
import { FailingFs } from '../../support/faults/failing-fs';

const enc = new TextEncoder();
const dec = new TextDecoder();

async function writeFile(fs: MemStoreFs | CrashingFs, path: string, text: string, sync: boolean): Promise<void> {
  const h = await fs.openAppend(path);
  await fs.write(h, enc.encode(text));
  if (sync) await fs.sync(h);
  await fs.close(h);
}

async function text(fs: MemStoreFs, path: string): Promise<string | null> {
  return (await fs.stat(path)) ? dec.decode(await fs.readFile(path)) : null;
}

describe('faults: in-memory disk model', () => {
  it('keeps synced bytes and committed names through a power cut, whatever the seed', async () => {
    for (let seed = 1; seed <= 30; seed++) {
      const fs = new CrashingFs();
      await fs.mkdirp('/s/run');
      await fs.syncDir('/s');
      await fs.syncDir('/');
      await writeFile(fs, '/s/run/j', 'durable\n', true);
      await fs.syncDir('/s/run');
      await writeFile(fs, '/s/run/j', 'volatile\n', false);
      const { fs: after, report } = fs.restart(seed);
      const content = await text(after, '/s/run/j');
      assert.ok(content?.startsWith('durable\n'), `seed ${seed}: ${content}`);
      assert.equal(report.choices.writes.length, 1);
    }
  });

  it('can lose a created name that no folder fsync committed, and an unsynced write', async () => {
    const outcomes = new Set<string>();
    for (let seed = 1; seed <= 60; seed++) {
      const fs = new CrashingFs();
      await fs.mkdirp('/d');
      await fs.syncDir('/');
      await writeFile(fs, '/d/f', 'abc', false);
      const after = fs.restart(seed).fs;
      outcomes.add(String(await text(after, '/d/f')));
    }
    assert.ok(outcomes.has('null'), 'the name was lost at least once');
    assert.ok(outcomes.has('abc'), 'the write was kept at least once');
    assert.ok(outcomes.has(''), 'the write was dropped at least once');
    assert.ok(outcomes.size >= 4, `garbled or torn outcomes too: ${[...outcomes].join('|')}`);
  });

  it('a rename without a folder fsync may or may not survive, never half', async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const fs = new CrashingFs();
      await fs.mkdirp('/d');
      await fs.syncDir('/');
      await writeFile(fs, '/d/state', 'old', true);
      await fs.syncDir('/d');
      await writeFile(fs, '/d/tmp', 'new', true);
      await fs.rename('/d/tmp', '/d/state');
      const after = fs.restart(seed).fs;
      const state = await text(after, '/d/state');
      assert.ok(state === 'old' || state === 'new', `seed ${seed}: ${state}`);
      seen.add(state ?? '');
    }
    assert.deepEqual([...seen].sort(), ['new', 'old']);
  });

  it('stops at the chosen fsync: that fsync and every later operation fail', async () => {
    const fs = new CrashingFs(undefined, { atSync: 2 });
    await fs.mkdirp('/d');
    await fs.syncDir('/');
    await assert.rejects(fs.syncDir('/d'), isPowerLoss);
    await assert.rejects(fs.stat('/d'), isPowerLoss);
    assert.equal(fs.syncs, 2);
  });

  it('follows POSIX errors: EEXIST, ENOENT, ENOTEMPTY, EBADF after close', async () => {
    const fs = new MemStoreFs();
    await fs.mkdirp('/a/b');
    await writeFile(fs, '/a/b/f', 'x', true);
    await assert.rejects(fs.openExclusive('/a/b/f'), { code: 'EEXIST' });
    await assert.rejects(fs.readFile('/a/b/g'), { code: 'ENOENT' });
    await assert.rejects(fs.openAppend('/nope/f'), { code: 'ENOENT' });
    await assert.rejects(fs.rmdir('/a/b'), { code: 'ENOTEMPTY' });
    await assert.rejects(fs.link('/a/b/f', '/a/b/f'), { code: 'EEXIST' });
    const h = await fs.openAppend('/a/b/f');
    await fs.close(h);
    await assert.rejects(fs.write(h, enc.encode('y')), { code: 'EBADF' });
    assert.deepEqual(await fs.readdir('/a/b'), ['f']);
  });

  it('failing fs: throws the chosen code at op N, sticky until cleared, partial writes', async () => {
    const mem = new MemStoreFs();
    const fs = new FailingFs(mem, { code: 'ENOSPC', atOp: 3, sticky: true, partialWrite: true });
    await fs.mkdirp('/d');
    const h = await fs.openAppend('/d/f');
    await assert.rejects(fs.write(h, enc.encode('abcd')), { code: 'ENOSPC' });
    await assert.rejects(fs.stat('/d/f'), { code: 'ENOSPC' });
    fs.clear();
    assert.equal(dec.decode(await fs.readFile('/d/f')), 'ab');
    assert.deepEqual(
      fs.injected.map((i) => i.op),
      ['write', 'stat'],
    );
  });
});
