import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { silentLog } from '../../../src/core/ports';
import { restoreBoth } from '../../../src/core/restore/session';
import { undoRestore } from '../../../src/core/restore/undo';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { answer, byTurn, harness, readText, reply, SETTINGS, toolUse, type Harness } from '../runtime/harness';

// An in-place session branch (records written before rewind became a fork, still read and undone):
// the fold re-opens the run, keeps no undone call's success, and one undo undoes files and session.

describe('restore: an in-place branch of files and session', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('re-opens the run, keeps the undone edit as it was at the checkpoint, and its undo brings both back', async () => {
    const script = byTurn([reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]), answer('done')]);
    h = await harness({ store: 'file', files: { 'a.txt': 'one\n' }, script });
    const done = await h.runtime().start({ task: 'edit', settings: SETTINGS });
    const records = await h.store.readRecords(done.runId);
    const afterModel = records.find((r) => r.type === 'checkpoint' && r.label === 'after_model');
    assert.ok(afterModel?.type === 'checkpoint');
    const writer = await h.store.openWriter(done.runId);
    const deps = {
      workspace: new NodeWorkspace({ roots: [h.root] }),
      blobs: h.store,
      journal: writer,
      clock: { now: () => Date.now() },
      log: silentLog,
      newId: randomUUID,
    };
    const both = await restoreBoth(deps, records, await h.store.readRun(done.runId), afterModel.checkpointId);
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    const state = await h.store.readRun(done.runId);
    assert.equal(state.ended, undefined, 'the run_end past the checkpoint no longer counts');
    assert.equal(state.ledger.find((e) => e.callId === 't1')?.status, 'planned', 'the undone edit is not reused as succeeded');
    assert.deepEqual(
      state.fileChanges?.map((c) => c.path),
      ['a.txt'],
    );
    const undo = await undoRestore(deps, await h.store.readRecords(done.runId), both.session.restore);
    await writer.close();
    assert.deepEqual(undo.written, ['a.txt']);
    assert.equal(readText(h.root, 'a.txt'), 'two\n');
    assert.equal((await h.store.readRun(done.runId)).status, 'completed');
  });
});
