import { strict as assert } from 'node:assert';
import { silentLog } from '../../../src/core/ports';
import { RestoreActions } from '../../../src/host/vscode/restore/restore-actions';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { assertEveryRequestValid } from '../../support/valid-requests';
import { answer, byTurn, harness, readText, reply, requestMessages, SETTINGS, toolUse, type Harness } from '../runtime/harness';

// Forks through the runtime: the parent stays, the fork goes on from the start of its step, and
// its first request names the files that differ from what its history says.

const actions = (h: Harness) =>
  new RestoreActions({
    store: h.store,
    workspace: new NodeWorkspace({ roots: [h.root] }),
    clock: { now: () => Date.now() },
    log: silentLog,
    isRunning: () => false,
  });

/** The text of the last message of request n. */
const lastText = (h: Harness, n: number) =>
  ((requestMessages(h.fake, n).at(-1) as { content: { type: string; text?: string }[] }).content ?? []).map((b) => b.text ?? '').join('\n');

const editThenAnswer = byTurn([
  reply([toolUse('t1', 'read_file', { path: 'a.txt' })]),
  reply([toolUse('t2', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
  answer('done'),
]);

for (const kind of ['memory', 'file'] as const) {
  describe(`forks through the runtime (${kind} store)`, () => {
    let h: Harness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it('a fork at step 2 with the files kept tells the model a.txt was changed on the other branch; the parent is untouched and resumable', async () => {
      h = await harness({ store: kind, files: { 'a.txt': 'one\n' }, script: editThenAnswer });
      const done = await h.runtime().start({ task: 'edit', settings: SETTINGS });
      assert.equal(done.status, 'completed');
      const parentBefore = await h.store.readRecords(done.runId);
      const { fork } = await actions(h).fork(done.runId, { step: 2 }, 'keep');
      assert.deepEqual(fork.parent, { runId: done.runId, step: 2 });
      const first = h.fake.requests.length;
      const resumed = await h.runtime().resume(fork.runId);
      assert.equal(resumed.status, 'completed', resumed.reason);
      assert.match(lastText(h, first), /a\.txt: changed by the agent after step 1 on another branch/);
      assertEveryRequestValid(h.fake);
      assert.deepEqual(await h.store.readRecords(done.runId), parentBefore);
      assert.equal((await h.store.readRun(fork.runId)).run.parent?.runId, done.runId);
    });

    it('a fork with the files restored rolls them back in the parent (undoable) and says so', async () => {
      h = await harness({ store: kind, files: { 'a.txt': 'one\n' }, script: editThenAnswer });
      const done = await h.runtime().start({ task: 'edit', settings: SETTINGS });
      assert.equal(readText(h.root, 'a.txt'), 'two\n');
      const restore = actions(h);
      const { fork, files } = await restore.fork(done.runId, { step: 2 }, 'restore');
      assert.deepEqual(files?.written, ['a.txt']);
      assert.equal(readText(h.root, 'a.txt'), 'one\n');
      const first = h.fake.requests.length;
      await h.runtime().continue(fork.runId, 'try another way', new AbortController().signal, { moreTurns: 5 });
      assert.match(lastText(h, first), /a\.txt: restored to the start of step 2/);
      assert.match(lastText(h, first), /try another way/);
      assertEveryRequestValid(h.fake);
      // The fork edited a.txt again: undoing the parent's rollback leaves it alone rather than overwrite that.
      const undo = await restore.undoLastRestore(done.runId);
      assert.deepEqual(undo?.written, []);
      assert.equal(undo?.conflicts.length, 1);
    });
  });
}
