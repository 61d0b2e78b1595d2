import { strict as assert } from 'node:assert';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { stagedTempName, stagedTempPid, sweepStagedTemps } from '../../../src/host/node/staged-temps';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import { tempDir } from '../runtime/harness';

// A host killed between staging a workspace write and renaming it leaves the temp file in the
// person's folder; the next write into that folder removes it when its process is gone.

const DEAD = 4_194_000; // above any pid this machine hands out (pid_max is at most 4,194,304)

describe('staged temp files of the workspace write path', () => {
  let root: string;
  beforeEach(() => (root = tempDir('staged')));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("names carry the writing process, at the store temp names' fixed length", () => {
    const name = stagedTempName(31337);
    assert.equal(name.length, '.ac-'.length + 14 + '.tmp'.length);
    assert.equal(stagedTempPid(name), 31337);
    assert.equal(stagedTempPid('.ac-0123456789abcd.tmp'), undefined, 'a store temp name is not one');
    assert.equal(stagedTempPid('notes.tmp'), undefined);
  });

  it("a sweep removes the dead processes' files only: a live one, this process's and other names stay", async () => {
    const dead = stagedTempName(DEAD);
    const live = stagedTempName(1);
    const mine = stagedTempName();
    for (const name of [dead, live, mine, 'keep.txt', '.ac-0123456789abcd.tmp']) writeFileSync(join(root, name), 'x');
    assert.deepEqual(await sweepStagedTemps(root, (pid) => pid !== DEAD), [dead]);
    assert.deepEqual(readdirSync(root).sort(), [live, mine, 'keep.txt', '.ac-0123456789abcd.tmp'].sort());
    assert.deepEqual(await sweepStagedTemps(join(root, 'missing')), [], 'an unreadable folder is left alone');
  });

  it('the first write into a folder removes what a killed host staged there', async () => {
    const left = stagedTempName(DEAD);
    writeFileSync(join(root, left), 'half a write');
    const workspace = new NodeWorkspace({ roots: [root], ripgrep: null });
    await workspace.write('a.txt', new TextEncoder().encode('one\n'), ABSENT);
    assert.deepEqual(readdirSync(root), ['a.txt']);
    assert.equal((await workspace.read('a.txt'))?.hash, hashContent(new TextEncoder().encode('one\n')));
  });
});
