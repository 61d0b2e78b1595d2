import { strict as assert } from 'node:assert';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from '../../../src/core/store/contract';
import { openFileStore } from '../../../src/host/node/store-factory';
import { tempDir } from '../runtime/harness';
import { closedFileRun } from '../store/fixtures';

describe('store files: no symlink followed, regular files only, the run id checked', function () {
  this.timeout(30_000);
  let root: string;
  beforeEach(() => {
    root = tempDir('store-sec');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const closedRun = (runId: string) => closedFileRun(root, runId);

  it('a journal whose run record names another run is refused with a clear error', async () => {
    const a = await closedRun('run-a');
    const b = join(root, 'runs', 'run-b');
    mkdirSync(b, { recursive: true });
    copyFileSync(join(a, 'journal.jsonl'), join(b, 'journal.jsonl'));
    writeFileSync(join(b, 'note.txt'), 'copied from run-a');
    await assert.rejects(openFileStore(root).readRun('run-b'), (error: unknown) => {
      assert.ok(error instanceof StoreError);
      assert.match(error.message, /is the journal of run run-a, not of run run-b: refused/);
      return true;
    });
    await assert.rejects(openFileStore(root).openWriter('run-b'), /journal of run run-a/);
    assert.equal((await openFileStore(root).readRun('run-a')).run.runId, 'run-a');
  });
});
