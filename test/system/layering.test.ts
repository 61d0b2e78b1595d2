import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// What a fresh Node process loads: the one layering fact test/unit/layering.test.ts cannot see in
// its own process (its module cache holds whatever the other tests loaded).

const ROOT = join(__dirname, '..', '..');

describe('layering of the store, in a fresh process', () => {
  it('a file store opens without loading pg; a postgres:// address loads it (pg-names.ts says why)', () => {
    const factory = join(ROOT, 'src', 'host', 'node', 'store-factory.ts');
    const pgLoaded = (address: string) =>
      execFileSync(
        process.execPath,
        [
          '--require',
          'tsx/cjs',
          '-e',
          `const s = require(${JSON.stringify(factory)}).openStore(${JSON.stringify(address)});
           console.log(Object.keys(require.cache).some((k) => k.includes('/node_modules/pg/')));
           void s.dispose?.();`,
        ],
        { encoding: 'utf8', cwd: ROOT },
      ).trim();
    const folder = mkdtempSync(join(tmpdir(), 'ac-factory-'));
    try {
      assert.equal(pgLoaded(folder), 'false');
      assert.equal(pgLoaded('postgres://nobody@127.0.0.1:9/none'), 'true');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
