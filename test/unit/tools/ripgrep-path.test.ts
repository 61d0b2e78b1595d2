import { strict as assert } from 'node:assert';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { join } from 'node:path';
import { ripgrepOnPath, ripgrepUnderAppRoot } from '../../../src/host/node/search/index';
import { tempDir } from '../runtime/harness';
import { findRipgrep } from './search-support';

function fakeRg(path: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, 0o755);
}

describe('where ripgrep comes from', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir('rg')));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("finds VS Code's ripgrep under appRoot in the older and the newer layout", () => {
    assert.equal(ripgrepUnderAppRoot(dir), null);
    const universal = join(dir, 'node_modules', '@vscode', 'ripgrep-universal', 'bin', `${process.platform}-${process.arch}`, 'rg');
    fakeRg(universal);
    assert.equal(ripgrepUnderAppRoot(dir), universal);
    const classic = join(dir, 'node_modules.asar.unpacked', '@vscode', 'ripgrep', 'bin', 'rg');
    fakeRg(classic);
    assert.equal(ripgrepUnderAppRoot(dir), universal, 'node_modules before node_modules.asar.unpacked');
    rmSync(join(dir, 'node_modules'), { recursive: true });
    assert.equal(ripgrepUnderAppRoot(dir), classic);
  });

  it('finds the ripgrep of the code-server install the host tests run in', function () {
    const found = findRipgrep();
    if (found === null || ripgrepOnPath() !== null) this.skip();
    assert.match(found, /lib\/vscode\/node_modules\/@vscode\/ripgrep(-universal)?\/bin\//);
  });

  it('takes rg from absolute PATH folders only (a relative entry would let the workspace supply it)', () => {
    fakeRg(join(dir, 'bin', 'rg'));
    const relative = nodePath.relative(process.cwd(), join(dir, 'bin'));
    assert.equal(ripgrepOnPath({ PATH: `${relative}:${join(dir, 'none')}` }), null);
    assert.equal(ripgrepOnPath({ PATH: `${relative}:${join(dir, 'bin')}` }), join(dir, 'bin', 'rg'));
  });
});
