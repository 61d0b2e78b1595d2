import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileStore } from '../../../src/host/node/store-factory';
import { pendingPatch, runInput } from '../../unit/store/fixtures';

const CHILD = join(__dirname, 'facts-crash-child.ts');

const patch = pendingPatch;

/** Runs the child that appends `what` to run r1 and is killed (SIGKILL) as it renames `dieAt` into place. */
function killedWhileAppending(root: string, dieAt: string, what: object): void {
  const child = spawnSync(process.execPath, ['--import', 'tsx', CHILD, root, 'r1', dieAt, JSON.stringify(what)], { encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', `the child was killed at ${dieAt} (${child.stdout}${child.stderr})`);
}

describe('the run facts (pending.json, refs.json): listing counts, GC blob references', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'store-facts-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a writer killed (kill -9) after its journal append, before state.json: the listing never claims 0 pending', async () => {
    const store = openFileStore(root, { timers: undefined });
    await (await store.createRun(runInput('r1'))).close();
    assert.equal((await store.listRuns())[0]!.pendingPatches, 0);
    killedWhileAppending(root, 'state.json', { records: [patch('p1')] });
    const [summary] = await openFileStore(root).listRuns();
    assert.equal(summary!.leased, false, 'the dead writer holds nothing');
    assert.notEqual(summary!.pendingPatches, 0, 'not known, or 1: never 0');
    const state = await store.readRun('r1');
    assert.deepEqual(
      state.patches.map((p) => p.state),
      ['pending'],
    );
    // The next writer brings state.json and pending.json back to the journal.
    await (await store.openWriter('r1')).close();
    assert.equal((await store.listRuns())[0]!.pendingPatches, 1);
  });

  it('a decision killed (kill -9) after its journal append, before pending.json: nothing claims 0 pending, the next accept is exact', async () => {
    const store = openFileStore(root, { timers: undefined });
    const writer = await store.createRun(runInput('r1'));
    await writer.append([patch('p1'), patch('p2')]);
    await writer.close();
    killedWhileAppending(root, 'pending.json', { decisions: [{ type: 'patch_state', patchId: 'p1', state: 'accepted', reason: 'kept' }] });
    assert.notEqual((await store.listRuns())[0]!.pendingPatches, 0);
    await store.appendDecisions('r1', [{ type: 'patch_state', patchId: 'p2', state: 'accepted', reason: 'kept' }]);
    assert.equal((await store.listRuns())[0]!.pendingPatches, 0, 'both accepted now');
    const again = await store.openWriter('r1');
    await again.append([patch('p3')]);
    await again.close();
    assert.equal((await store.listRuns())[0]!.pendingPatches, 1);
  });
});
