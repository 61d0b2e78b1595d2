import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replaceFileAtomic, tempName } from '../../../src/core/store/atomic-file';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';

describe('store: atomic replace', () => {
  let dir = '';
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'atomic-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('temp names have one short fixed length, whatever the target', () => {
    const names = new Set(Array.from({ length: 50 }, () => tempName()));
    assert.equal(names.size, 50);
    for (const name of names) assert.match(name, /^\.ac-[0-9a-f]{14}\.tmp$/);
  });

  it('replaces a file whose name is 244 characters long (the temp name must not pass 255 bytes)', async () => {
    const name = `${'s'.repeat(239)}.json`;
    await replaceFileAtomic(new NodeStoreFs(), dir, name, '{"a":1}');
    await replaceFileAtomic(new NodeStoreFs(), dir, name, '{"a":2}');
    assert.equal(readFileSync(join(dir, name), 'utf8'), '{"a":2}');
    assert.deepEqual(readdirSync(dir), [name]);
  });
});
