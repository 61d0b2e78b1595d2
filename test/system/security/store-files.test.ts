import { strict as assert } from 'node:assert';
import { spawnSync, execFileSync } from 'node:child_process';
import { copyFileSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import { tempDir } from '../../unit/runtime/harness';
import { closedFileRun } from '../../unit/store/fixtures';

const REPO = resolve(__dirname, '..', '..', '..');

/** Lists the store's runs and reads each (as `status` does) in a child process, so that a read that never ends cannot hang the tests. */
function listInChild(root: string): { status: number | null; stdout: string; stderr: string; ms: number } {
  const script = `const { openFileStore } = require(${JSON.stringify(join(REPO, 'src/host/node/store-factory.ts'))});
    (async () => { const s = openFileStore(${JSON.stringify(root)}); for (const r of await s.listRuns()) { await s.readRun(r.runId); console.log(r.runId, 'ok'); } })().catch((e) => console.log('error:', e.message));`;
  const started = Date.now();
  const child = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: REPO, encoding: 'utf8', timeout: 15_000 });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr, ms: Date.now() - started };
}

describe('store files: no symlink followed, regular files only, the run id checked', function () {
  this.timeout(30_000);
  let root: string;
  beforeEach(() => {
    root = tempDir('store-sec');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const closedRun = (runId: string) => closedFileRun(root, runId);

  it('state.json -> /dev/zero is a clear error at once, not a read that runs until killed', async () => {
    const dir = await closedRun('r1');
    rmSync(join(dir, 'state.json'), { force: true });
    symlinkSync('/dev/zero', join(dir, 'state.json'));
    const result = listInChild(root);
    assert.notEqual(result.status, null, `killed after ${result.ms} ms: the read of /dev/zero never ended`);
    assert.match(result.stdout, /error: store file .*state\.json is a symbolic link: refused/, result.stderr);
    assert.ok(result.ms < 10_000);
    await assert.rejects(new NodeStoreFs().readFile(join(dir, 'state.json')), /store file .*state\.json is a symbolic link: refused/);
  });

  it('a FIFO as state.json never blocks; a journal symlink is a clear error', async () => {
    const dir = await closedRun('r1');
    rmSync(join(dir, 'state.json'), { force: true });
    execFileSync('mkfifo', [join(dir, 'state.json')]);
    const fs = new NodeStoreFs();
    await assert.rejects(fs.readFile(join(dir, 'state.json')), /is not a regular file: refused/);
    const elsewhere = join(tempDir('elsewhere'), 'journal.jsonl');
    copyFileSync(join(dir, 'journal.jsonl'), elsewhere);
    rmSync(join(dir, 'journal.jsonl'));
    symlinkSync(elsewhere, join(dir, 'journal.jsonl'));
    await assert.rejects(openFileStore(root).readRun('r1'), /journal\.jsonl is a symbolic link: refused/);
    await assert.rejects(fs.openAppend(join(dir, 'journal.jsonl')), /is a symbolic link: refused/);
  });
});
