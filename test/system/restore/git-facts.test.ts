import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPreparedWrite, prepareWrite } from '../../../src/core/patches/record';
import { headMovedWarning } from '../../../src/core/restore/git-warning';
import { rollbackFiles } from '../../../src/core/restore/rollback';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { readGitFacts } from '../../../src/host/node/git-facts';
import { MemoryBlobs, MemoryJournal, MemoryLog, fixedClock, newId, utf8 } from '../../unit/patches/fakes';

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
