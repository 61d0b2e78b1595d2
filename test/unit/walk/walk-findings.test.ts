import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import { encodeText, hashContent } from '../../../src/core/patches/hash';
import { hunkRef, reviewFile } from '../../../src/core/patches/review';
import { loadRunReview } from '../../../src/core/patches/review-load';
import { silentLog } from '../../../src/core/ports';
import { undoHunksInline } from '../../../src/core/restore/inline-undo';
import { UNDONE_SINCE_MESSAGE } from '../../../src/core/runtime/reconcile';
import type { CheckpointStore } from '../../../src/core/store/contract';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { openFileStore } from '../../../src/host/node/store-factory';
import { RestoreActions } from '../../../src/host/vscode/restore/restore-actions';
import { MemStoreFs } from '../../support/faults/mem-fs';
import {
  faultStore,
  groupRecords,
  prepareRoot,
  runInput,
  STORE_ROOT,
  FIRST_PROCESS,
  NEXT_PROCESS,
} from '../../support/faults/store-workload';
import { assertEveryRequestValid } from '../../support/valid-requests';
import { answer, byTurn, harness, readText, reply, requestMessages, SETTINGS, tempDir, toolUse, type Harness } from '../runtime/harness';

// The product defects the random walk (test/support/walk) found, each as it was met, over the
// file store and the strict fake API.

const never = () => new AbortController().signal;

/** The texts of the messages after the last assistant message of request n. */
function trailingText(h: Harness, n: number): string {
  const messages = requestMessages(h.fake, n) as { role: string; content: { type: string; text?: string; content?: unknown }[] }[];
  const last = messages.map((m) => m.role).lastIndexOf('assistant');
  return JSON.stringify(messages.slice(last + 1));
}

describe('random walk findings', () => {
  let h: Harness | undefined;
  let storeDir = '';
  let store: CheckpointStore;
  const actions = () =>
    new RestoreActions({
      store,
      workspace: new NodeWorkspace({ roots: [h!.root] }),
      clock: { now: () => Date.now() },
      log: silentLog,
      isRunning: () => false,
    });

  beforeEach(() => {
    storeDir = tempDir('walk-store');
    // A state snapshot after every append: a resume folds from it, as a long run does.
    store = openFileStore(storeDir, { snapshotStepBytes: 0 });
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('an inline undo of an older patch of a file (one a snapshot no longer holds) is named on the next request', async () => {
    h = await harness({
      files: { 'a.txt': 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n' },
      script: byTurn([
        reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'ONE' })]),
        reply([toolUse('t2', 'edit_file', { path: 'a.txt', old_string: 'seven', new_string: 'SEVEN' })]),
        answer('done'),
        answer('checked'),
      ]),
    });
    const done = await h.runtime({ store }).start({ task: 'edit', settings: SETTINGS });
    assert.equal(done.status, 'completed', done.reason);
    const first = (await store.readRun(done.runId)).patches[0]!;
    // The person undoes the first edit's hunk in the editor; the record names the file.
    const writer = await store.openWriter(done.runId);
    await writer.append([{ type: 'review', decision: 'undo', hunks: [{ patchId: first.patchId, hunk: 0 }], paths: ['a.txt'] }]);
    await writer.close();
    assert.deepEqual(
      (await store.readResumeState(done.runId)).patches.map((p) => p.patchId),
      [(await store.readRun(done.runId)).patches[1]!.patchId],
      'the resume state holds only the latest patch of a.txt',
    );
    await h.runtime({ store }).continue(done.runId, 'check it', never(), { moreTurns: 3 });
    assert.match(trailingText(h, h.fake.requests.length - 1), /a\.txt: a hunk of the agent's change was undone by the person/);
    assertEveryRequestValid(h.fake);
  });

  it('a fork is told of a rollback the person made in the parent after the fork point, of a change its history holds', async () => {
    h = await harness({
      files: { 'a.txt': 'one\n' },
      script: byTurn([
        reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
        reply([toolUse('t2', 'read_file', { path: 'a.txt' })]),
        answer('done'),
        answer('again'),
      ]),
    });
    const done = await h.runtime({ store }).start({ task: 'edit', settings: SETTINGS });
    const patchId = (await store.readRun(done.runId)).patches[0]!.patchId;
    await actions().rollback(done.runId, { kind: 'patch', patchId });
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    // Step 3's history says "edited a.txt"; the file is back to before.
    const { fork } = await actions().fork(done.runId, { step: 3 }, 'keep');
    await h.runtime({ store }).continue(fork.runId, 'go on', never(), { moreTurns: 3 });
    assert.match(trailingText(h, h.fake.requests.length - 1), /a\.txt: rolled back by the person/);
    assertEveryRequestValid(h.fake);
  });

  it('a call recorded succeeded whose file was restored since is not reused as done when the run resumes', async () => {
    h = await harness({
      files: { 'a.txt': 'one\n' },
      script: byTurn([
        reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
        answer('done'),
        answer('again'),
      ]),
    });
    const done = await h.runtime({ store }).start({ task: 'edit', settings: SETTINGS });
    const state = await store.readRun(done.runId);
    const finished = state.checkpoints.find((c) => c.label === 'tool_finished' && c.callId === 't1')!;
    // A fork inside step 1 after the edit finished: its open call t1 is `succeeded`.
    const fork = await store.forkRun(done.runId, { runId: 'fork-in-step', step: 1, checkpointId: finished.checkpointId, files: 'keep' });
    await actions().rollback(done.runId, { kind: 'patch', patchId: state.patches[0]!.patchId });
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    const resumed = await h.runtime({ store }).resume(fork.runId);
    assert.equal(resumed.status, 'completed', resumed.reason);
    const sent = trailingText(h, h.fake.requests.length - 1);
    assert.ok(sent.includes(UNDONE_SINCE_MESSAGE.slice(0, 40)), sent);
    assert.doesNotMatch(sent, /already succeeded[^"]*do not repeat them:\\n- edit_file t1/);
    assert.match(sent, /whose change was undone since[^"]*\\n- edit_file t1/);
    assertEveryRequestValid(h.fake);
  });

  it('a file restore cut by a kill after its record, before its writes, is settled on the next open and never taken as done', async () => {
    h = await harness({
      files: { 'a.txt': 'one\n' },
      script: byTurn([
        reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
        answer('done'),
        answer('again'),
      ]),
    });
    const done = await h.runtime({ store }).start({ task: 'edit', settings: SETTINGS });
    const start = (await store.readRun(done.runId)).checkpoints[0]!;
    // The process dies right after the restore record is on disk: its file write never happens.
    const live = new NodeWorkspace({ roots: [h.root] });
    const dying = new Proxy(live, {
      get: (target, prop, receiver) =>
        prop === 'write' || prop === 'delete'
          ? () => Promise.reject(Object.assign(new Error('killed'), { code: 'EKILLED' }))
          : (Reflect.get(target, prop, receiver) as unknown),
    });
    const cut = new RestoreActions({ store, workspace: dying, clock: { now: () => Date.now() }, log: silentLog, isRunning: () => false });
    await assert.rejects(cut.restoreCheckpoint(done.runId, start.checkpointId, 'files'), /killed/);
    assert.equal(readText(h.root, 'a.txt'), 'two\n');
    assert.equal((await store.readResumeState(done.runId)).restores[0]?.confirm, true, 'the restore awaits its confirmation');
    await h.runtime({ store }).continue(done.runId, 'go on', never(), { moreTurns: 3 });
    const records = await store.readRecords(done.runId);
    const settled = records.find((r) => r.type === 'restore_done');
    assert.deepEqual(settled?.type === 'restore_done' ? [settled.written, settled.left.map((l) => l.path), settled.cut] : undefined, [
      [],
      ['a.txt'],
      true,
    ]);
    assert.ok(
      records.some(
        (r) => r.type === 'note' && r.kind === 'warning' && /cut before all its file writes: a\.txt left as they were/.test(r.text),
      ),
    );
    assert.equal((await store.readResumeState(done.runId)).restores[0]?.confirm, undefined);
    // The model is not told a.txt was restored: it was not.
    assert.doesNotMatch(trailingText(h, h.fake.requests.length - 1), /a\.txt: (restored|rolled back)/);
    assert.equal(readText(h.root, 'a.txt'), 'two\n');
    assertEveryRequestValid(h.fake);
  });

  it('a session restore to the run_start of a fork made at step 1 forks it there, and the new fork runs', async () => {
    h = await harness({
      files: { 'a.txt': 'one\n' },
      script: byTurn([
        reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
        answer('done'),
        answer('again'),
      ]),
    });
    const done = await h.runtime({ store }).start({ task: 'edit', settings: SETTINGS });
    const { fork } = await actions().fork(done.runId, { step: 1 }, 'keep');
    const start = (await store.readRun(fork.runId)).checkpoints;
    assert.deepEqual(
      start.map((c) => c.label),
      ['run_start'],
    );
    const again = await actions().restoreCheckpoint(fork.runId, start[0]!.checkpointId, 'session');
    assert.ok(again.fork, 'a fork of the fork at its run_start');
    const state = await store.readResumeState(again.fork.runId);
    assert.deepEqual(state.messages, [{ role: 'user', content: 'edit' }]);
    const resumed = await h.runtime({ store }).resume(again.fork.runId);
    assert.equal(resumed.status, 'completed', resumed.reason);
    assertEveryRequestValid(h.fake);
  });

  it('a fork is told of a restore the person made in its parent after the fork was made, on its next request (no open call needed)', async () => {
    h = await harness({
      files: { 'a.txt': 'one\n' },
      script: byTurn([
        reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
        answer('done'),
        answer('checked'),
      ]),
    });
    const done = await h.runtime({ store }).start({ task: 'edit', settings: SETTINGS });
    // A fork after the edit (its model saw a.txt as "two"), then the person restores the parent's files.
    const { fork } = await actions().fork(done.runId, { step: 2 }, 'keep');
    const start = (await store.readRun(done.runId)).checkpoints[0]!;
    await actions().restoreCheckpoint(done.runId, start.checkpointId, 'files');
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    const before = h.fake.requests.length;
    await h.runtime({ store }).continue(fork.runId, 'check it', never(), { moreTurns: 3 });
    assert.ok(h.fake.requests.length > before);
    assert.match(trailingText(h, before), /a\.txt: restored by the person/);
    // What the fork took in is recorded in its journal (it looks after that point next time).
    const records = (await store.readRecords(fork.runId)).filter((r) => r.type === 'ancestor_changes');
    assert.equal(records.length, 1);
    assertEveryRequestValid(h.fake);
  });

  it('an inline Undo cut by a kill between its edit and its record is recognised as the undo on the next open (decision recorded, model told)', async () => {
    h = await harness({
      files: { 'a.txt': 'one\ntwo\n' },
      script: byTurn([
        reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'two', new_string: 'TWO' })]),
        answer('done'),
        answer('checked'),
      ]),
    });
    const done = await h.runtime({ store }).start({ task: 'edit', settings: SETTINGS });
    const review = await loadRunReview(store, done.runId);
    const [view] = reviewFile(readText(h.root, 'a.txt'), review.pending);
    const live = encodeText('one\nTWO\n', false);
    const result = encodeText('one\ntwo\n', false);
    const writer = await store.openWriter(done.runId);
    let appends = 0;
    // The process dies after the edit, before the undo's restore_done and decision are on disk.
    const journal = {
      append: (records: Parameters<typeof writer.append>[0]) =>
        ++appends === 1 ? writer.append(records) : Promise.reject(new Error('killed')),
    };
    const deps = {
      workspace: new NodeWorkspace({ roots: [h.root] }),
      blobs: store,
      journal,
      clock: { now: () => Date.now() },
      log: silentLog,
      newId: () => 'undo-1',
    };
    const undo = { path: 'a.txt', live, liveHash: hashContent(live), result, resultHash: hashContent(result), hunks: [hunkRef(view!)] };
    await assert.rejects(undoHunksInline(deps, undo), /killed/);
    await writer.close();
    assert.equal(readText(h.root, 'a.txt'), 'one\ntwo\n');
    const before = h.fake.requests.length;
    await h.runtime({ store }).continue(done.runId, 'check it', never(), { moreTurns: 3 });
    const records = await store.readRecords(done.runId);
    const settled = records.find((r) => r.type === 'restore_done');
    assert.deepEqual(settled?.type === 'restore_done' ? [settled.written, settled.cut] : undefined, [['a.txt'], true]);
    assert.ok(records.some((r) => r.type === 'review' && r.decision === 'undo' && r.hunks[0]?.patchId === view!.patch.patchId));
    assert.match(trailingText(h, before), /a\.txt: a hunk of the agent's change was undone by the person/);
    // The review no longer waits on the hunk: it was undone, by the person's Undo.
    assert.deepEqual(reviewFile(readText(h.root, 'a.txt'), (await loadRunReview(store, done.runId)).pending), []);
    assertEveryRequestValid(h.fake);
  });

  it('a fork of a run killed after its state file went stale stands on the whole journal (the checkpoint it names is there)', async () => {
    const disk = new MemStoreFs();
    await prepareRoot(disk);
    const first = faultStore(disk, FIRST_PROCESS);
    const writer = await first.createRun(runInput('parent'));
    for (let g = 1; g <= 2; g++) await writer.append(groupRecords(g));
    const statePath = `${STORE_ROOT}/runs/parent/state.json`;
    const stale = await disk.readFile(statePath);
    for (let g = 3; g <= 6; g++) await writer.append(groupRecords(g));
    // kill -9 right after the journal's fsync, before the state file (a cache) was rewritten.
    await disk.unlink(statePath);
    const handle = await disk.openExclusive(statePath);
    await disk.write(handle, stale);
    await disk.sync(handle);
    await disk.close(handle);
    const next = faultStore(disk, NEXT_PROCESS);
    const fork = await next.forkRun('parent', { runId: 'fork', step: 5, checkpointId: 'c5', files: 'keep' });
    const state = await next.readResumeState(fork.runId);
    // At the start of step 5: its before_model (c5) is not the fork's; step 4's last checkpoint is.
    assert.equal(state.latestCheckpoint?.checkpointId, 'c4');
  });
});
