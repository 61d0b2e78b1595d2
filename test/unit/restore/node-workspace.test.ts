import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import { applyPreparedWrite, prepareWrite } from '../../../src/core/patches/record';
import { PathRefusedError, StaleContentError } from '../../../src/core/ports';
import { headMovedWarning } from '../../../src/core/restore/git-warning';
import { rollbackFiles } from '../../../src/core/restore/rollback';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { parsePorcelain, readGitFacts } from '../../../src/host/node/git-facts';
import { linksWork } from '../../support/links';
import { MemoryBlobs, MemoryJournal, MemoryLog, fixedClock, newId, utf8 } from '../patches/fakes';

/** Whether git runs here (Windows under Wine has none); on Linux and in CI it always does. */
function gitRuns(): boolean {
  return spawnSync('git', ['--version']).status === 0;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });
}

/** Every file under dir (`.git` included) with its bytes, for byte-identity checks. */
function snapshotTree(dir: string, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    const rel = `${prefix}${name}`;
    if (statSync(full).isDirectory()) for (const [k, v] of snapshotTree(full, `${rel}/`)) out.set(k, v);
    else out.set(rel, readFileSync(full).toString('base64'));
  }
  return out;
}

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

  it('reads git facts of a real repository and warns when HEAD moved', async function () {
    if (!gitRuns()) this.skip(); // Windows under Wine has no git
    assert.deepEqual(await readGitFacts(root), { isRepo: false, dirtyPaths: [] });
    git(root, 'init', '-q', '-b', 'main');
    writeFileSync(join(root, 'a.txt'), 'a\n');
    git(root, 'add', 'a.txt');
    git(root, 'commit', '-qm', 'one');
    writeFileSync(join(root, 'a.txt'), 'changed\n');
    writeFileSync(join(root, 'new file.txt'), 'n\n');
    const start = await readGitFacts(root);
    assert.equal(start.isRepo, true);
    assert.equal(start.branch, 'main');
    assert.match(start.head!, /^[0-9a-f]{40}$/);
    assert.deepEqual([...start.dirtyPaths].sort(), ['a.txt', 'new file.txt']);
    assert.equal(headMovedWarning(start, start), undefined);
    git(root, 'commit', '-qam', 'two');
    const now = await readGitFacts(root);
    assert.match(headMovedWarning(start, now)!, /HEAD moved/);
  });

  it('parses porcelain -z with renames', () => {
    assert.deepEqual(parsePorcelain(' M a.txt\0R  new.txt\0old.txt\0?? u.txt\0'), ['a.txt', 'new.txt', 'u.txt']);
  });

  it('a rollback leaves every other file and .git byte-identical (no git writes)', async function () {
    if (!gitRuns()) this.skip(); // Windows under Wine has no git
    git(root, 'init', '-q', '-b', 'main');
    writeFileSync(join(root, 'keep.txt'), 'keep\n');
    writeFileSync(join(root, 'edit.txt'), 'one\ntwo\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'base');
    await readGitFacts(root);
    const ws = new NodeWorkspace({ roots: [root], storeDir: store });
    const before = snapshotTree(root);
    const deps = { workspace: ws, blobs: new MemoryBlobs(), journal: new MemoryJournal(), clock: fixedClock, log: new MemoryLog(), newId };
    const patch = await applyPreparedWrite(
      deps,
      { runId: 'r', stepId: 1, toolCallId: 'c' },
      await prepareWrite(ws, 'edit.txt', utf8('one\nTWO\n')),
    );
    const created = await applyPreparedWrite(
      deps,
      { runId: 'r', stepId: 1, toolCallId: 'c' },
      await prepareWrite(ws, 'made.txt', utf8('m\n')),
    );
    await readGitFacts(root);
    await rollbackFiles(deps, { patches: [patch, created], allCheckpoints: [] }, { kind: 'run' });
    await readGitFacts(root);
    assert.deepEqual(snapshotTree(root), before);
  });
});
