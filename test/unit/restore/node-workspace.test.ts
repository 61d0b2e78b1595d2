import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import { PathRefusedError, StaleContentError } from '../../../src/core/ports';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { parsePorcelain } from '../../../src/host/node/git-facts';
import { linksWork } from '../../support/links';
import { utf8 } from '../patches/fakes';

describe('host/node workspace and git facts', () => {
  let base: string;
  let root: string;
  let store: string;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'ac-ws-'));
    root = join(base, 'ws');
    store = join(root, '.agent-store');
    mkdirSync(root);
    mkdirSync(store);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('refuses traversal, absolute outside, symlink escape, .git and the store with a clear reason', async function () {
    if (process.platform === 'win32' && !linksWork(base)) this.skip(); // Wine makes no links: not proven under Windows here
    writeFileSync(join(base, 'secret.txt'), 'outside');
    // A junction on Windows: made without any privilege, the link an attacker would use there.
    symlinkSync(base, join(root, 'escape'), 'junction');
    mkdirSync(join(root, '.git'));
    const ws = new NodeWorkspace({ roots: [root], storeDir: store });
    const refusals: [string, RegExp][] = [
      ['../secret.txt', /`\.\.` escapes/],
      ['a/../../secret.txt', /`\.\.` escapes/],
      [join(base, 'secret.txt'), /absolute path outside/],
      ['escape/secret.txt', /symlinks followed.*outside/],
      ['.git/config', /\.git/],
      ['sub/.git/HEAD', /\.git/],
      ['.agent-store/run/journal', /checkpoint store/],
    ];
    for (const [path, reason] of refusals) {
      await assert.rejects(ws.normalize(path), (e: unknown) => e instanceof PathRefusedError && reason.test(e.message), path);
      await assert.rejects(ws.write(path, utf8('x'), ABSENT), PathRefusedError, path);
    }
    assert.equal(readFileSync(join(base, 'secret.txt'), 'utf8'), 'outside');
  });

  it('accepts paths inside (absolute, ./, symlink staying inside) and returns the relative form', async function () {
    if (process.platform === 'win32' && !linksWork(base)) this.skip(); // Wine makes no links: not proven under Windows here
    mkdirSync(join(root, 'src'));
    symlinkSync(join(root, 'src'), join(root, 'link'), 'junction');
    const ws = new NodeWorkspace({ roots: [root] });
    assert.equal(await ws.normalize('./src/a.ts'), 'src/a.ts');
    assert.equal(await ws.normalize(join(root, 'src', 'a.ts')), 'src/a.ts');
    assert.equal(await ws.normalize('link/new/deep.ts'), 'src/new/deep.ts');
  });

  it('writes durably with the expected hash, keeps the mode, refuses a stale write', async () => {
    const ws = new NodeWorkspace({ roots: [root] });
    writeFileSync(join(root, 'run.sh'), '#!/bin/sh\n');
    chmodSync(join(root, 'run.sh'), 0o755);
    const live = await ws.read('run.sh');
    await ws.write('run.sh', utf8('#!/bin/sh\necho hi\n'), live!.hash);
    // Windows keeps no execute bit (a mode is read-only or not): the mode kept is what it has.
    assert.equal(statSync(join(root, 'run.sh')).mode & 0o777, process.platform === 'win32' ? 0o666 : 0o755);
    await assert.rejects(ws.write('run.sh', utf8('x'), live!.hash), StaleContentError);
    await ws.write('new/dir/f.txt', utf8('n'), ABSENT);
    assert.equal(readFileSync(join(root, 'new/dir/f.txt'), 'utf8'), 'n');
    await ws.delete('new/dir/f.txt', hashContent(utf8('n')));
    assert.equal(await ws.read('new/dir/f.txt'), null);
    assert.deepEqual(readdirSync(join(root, 'new/dir')), [], 'no temp file left behind');
  });

  it('writes a file whose name is near the file system limit (244 characters): the temp name has a fixed length', async () => {
    const ws = new NodeWorkspace({ roots: [root] });
    const name = `${'n'.repeat(240)}.txt`;
    const refused = await ws.write(name, utf8('long'), ABSENT).then(
      () => undefined,
      (error: unknown) => error,
    );
    if (refused !== undefined) {
      // Only on Windows past MAX_PATH without long paths: refused in words before anything is written.
      assert.ok(process.platform === 'win32' && join(root, name).length >= 260, String(refused));
      assert.ok(refused instanceof PathRefusedError && /need long paths enabled/.test(refused.message), String(refused));
      assert.deepEqual(readdirSync(root), ['.agent-store'], 'nothing written');
      return;
    }
    const live = await ws.read(name);
    await ws.write(name, utf8('longer'), live!.hash);
    assert.equal(readFileSync(join(root, name), 'utf8'), 'longer');
    assert.deepEqual(
      readdirSync(root).filter((n) => n.endsWith('.tmp')),
      [],
      'no temp file left behind',
    );
  });

  it('parses porcelain -z with renames', () => {
    assert.deepEqual(parsePorcelain(' M a.txt\0R  new.txt\0old.txt\0?? u.txt\0'), ['a.txt', 'new.txt', 'u.txt']);
  });
});
