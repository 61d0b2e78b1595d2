import { strict as assert } from 'node:assert';
import { silentLog } from '../../../src/core/ports';
import { RestoreActions } from '../../../src/host/vscode/restore/restore-actions';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { assertEveryRequestValid } from '../../support/valid-requests';
import {
  answer,
  byTurn,
  harness,
  readText,
  reply,
  requestMessages,
  ScriptedApprover,
  SETTINGS,
  toolUse,
  type Harness,
} from '../runtime/harness';

// The six findings of issue 31, each as it was met: a restore, then a way on (a new instruction,
// Resume, Undo), and what the model is sent or what the files hold afterwards.

const actions = (h: Harness) =>
  new RestoreActions({
    store: h.store,
    workspace: new NodeWorkspace({ roots: [h.root] }),
    clock: { now: () => Date.now() },
    log: silentLog,
    isRunning: () => false,
  });

const never = () => new AbortController().signal;

/** The call row of `callId` in the run's timeline view. */
async function callRow(h: Harness, runId: string, callId: string) {
  const view = buildRunView(await h.store.readRun(runId), new Map(), false);
  const step = view.steps.find((s) => s.calls.some((c) => c.callId === callId))!;
  return { step, call: step.calls.find((c) => c.callId === callId)! };
}

const textOf = (message: unknown): string =>
  ((message as { content: { type: string; text?: string }[] }).content ?? [])
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n');

describe('rewind: the findings of issue 31', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('"before this call" is the checkpoint before the call started, named in words', async () => {
    h = await harness({
      store: 'file',
      files: { 'a.txt': 'one\n' },
      script: byTurn([reply([toolUse('t1', 'read_file', { path: 'a.txt' })]), answer('done')]),
    });
    const done = await h.runtime().start({ task: 'read', settings: SETTINGS });
    const { call } = await callRow(h, done.runId, 't1');
    const records = await h.records(done.runId);
    const target = records.find((r) => r.type === 'checkpoint' && r.checkpointId === call.checkpointId);
    assert.ok(target?.type === 'checkpoint');
    assert.equal(target.label, 'after_model', 'not tool_started: the call has not started at the point restored');
    assert.equal(call.restorePoint, "after step 1's model reply, before read_file");
  });

  it('a session restore to before a call, then a new instruction, never sends a tool_use without its tool_result', async () => {
    h = await harness({
      store: 'file',
      files: { 'a.txt': 'one\n' },
      script: byTurn([reply([toolUse('t1', 'read_file', { path: 'a.txt' })]), answer('done'), answer('again')]),
    });
    const done = await h.runtime().start({ task: 'read', settings: SETTINGS });
    assert.equal(done.status, 'completed');
    const { call } = await callRow(h, done.runId, 't1');
    const { fork } = await actions(h).restoreCheckpoint(done.runId, call.checkpointId!, 'session');
    assert.ok(fork, 'a session restore is a fork');
    const outcome = await h
      .runtime()
      .continue(fork.runId, 'now something else', never(), { moreTurns: 5 })
      .catch((error: unknown) => error);
    assert.ok(!(outcome instanceof Error), `the fork takes the instruction: ${String(outcome)}`);
    assertEveryRequestValid(h.fake);
    const resumed = await h.runtime().resume(fork.runId);
    assert.equal(resumed.status, 'completed', resumed.reason);
    assertEveryRequestValid(h.fake);
    const again = await h.runtime().continue(fork.runId, 'now something else', never(), { moreTurns: 5 });
    assert.equal(again.status, 'completed', again.reason);
    assertEveryRequestValid(h.fake);
    assert.equal((await h.store.readRun(done.runId)).status, 'completed', 'the parent stays as it was');
  });

  it('restore both, then Resume: the undone edit is made again once allowed, never reported as already succeeded', async () => {
    const script = byTurn([reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]), answer('fixed')]);
    h = await harness({ store: 'file', files: { 'a.txt': 'one\n' }, script, approver: new ScriptedApprover(['allow_once']) });
    const paused = await h.runtime().start({ task: 'edit', settings: { ...SETTINGS, maxTurns: 1 } });
    assert.equal(paused.status, 'paused');
    assert.equal(readText(h.root, 'a.txt'), 'two\n');
    const { call } = await callRow(h, paused.runId, 't1');
    const { fork } = await actions(h).restoreCheckpoint(paused.runId, call.checkpointId!, 'both');
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    const resumed = await h.runtime().resume(fork!.runId, never(), { raise: { maxTurns: 5 } });
    assert.equal(resumed.status, 'completed', resumed.reason);
    assert.equal(readText(h.root, 'a.txt'), 'two\n', 'the edit was made again');
    assert.deepEqual(
      h.approver.approvals.map((a) => a.callId),
      ['t1'],
      'after a restore to before it, the call is asked before it runs again',
    );
    const sent = requestMessages(h.fake, h.fake.requests.length - 1);
    assert.doesNotMatch(JSON.stringify(sent), /do not repeat them/);
    assertEveryRequestValid(h.fake);
  });

  it('a rolled-back file is named to the model on the next request, after Resume and after a new instruction', async () => {
    const script = byTurn([
      reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
      answer('fixed'),
      answer('again'),
    ]);
    h = await harness({ store: 'file', files: { 'a.txt': 'one\n' }, script });
    const done = await h.runtime().start({ task: 'edit', settings: SETTINGS });
    const patchId = (await h.store.readRun(done.runId)).patches[0]!.patchId;
    await actions(h).rollback(done.runId, { kind: 'patch', patchId });
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    await h.runtime().continue(done.runId, 'check the file', never(), { moreTurns: 5 });
    const last = requestMessages(h.fake, h.fake.requests.length - 1).at(-1);
    assert.match(textOf(last), /a\.txt: rolled back by the person/);
    assert.match(textOf(last), /check the file/);
    // Told once: the request after that one does not repeat it.
    const state = await h.store.readResumeState(done.runId);
    assert.equal(state.fileChanges, undefined);
  });

  it('a hunk the person undid is named in the recovery note of the next Resume', async () => {
    const script = byTurn([reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]), answer('fixed')]);
    h = await harness({ store: 'file', files: { 'a.txt': 'one\n' }, script });
    const paused = await h.runtime().start({ task: 'edit', settings: { ...SETTINGS, maxTurns: 1 } });
    const patchId = (await h.store.readRun(paused.runId)).patches[0]!.patchId;
    const writer = await h.store.openWriter(paused.runId);
    await writer.append([{ type: 'review', decision: 'undo', hunks: [{ patchId, hunk: 0 }] }]);
    await writer.close();
    await h.runtime().resume(paused.runId, never(), { raise: { maxTurns: 5 } });
    const last = requestMessages(h.fake, h.fake.requests.length - 1).at(-1);
    assert.match(textOf(last), /a\.txt: a hunk of the agent's change was undone by the person/);
    assertEveryRequestValid(h.fake);
  });

  it('undo of a "both" restore puts the files back as well as the session', async () => {
    const script = byTurn([
      reply([toolUse('t1', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
      answer('Fixed, all tests pass'),
    ]);
    h = await harness({ store: 'file', files: { 'a.txt': 'one\n' }, script });
    const done = await h.runtime().start({ task: 'edit', settings: SETTINGS });
    const { call } = await callRow(h, done.runId, 't1');
    const restore = actions(h);
    await restore.restoreCheckpoint(done.runId, call.checkpointId!, 'both');
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    const undo = await restore.undoLastRestore(done.runId);
    assert.deepEqual(undo?.written, ['a.txt']);
    assert.equal(readText(h.root, 'a.txt'), 'two\n');
    const state = await h.store.readRun(done.runId);
    assert.equal(state.status, 'completed');
    assert.equal(state.patches[0]!.state, 'pending');
    assert.equal((await h.store.listRuns()).length, 2, 'the fork stays listed');
  });

  it('a session restore to the start of a step leaves no step without its model call', async () => {
    const script = byTurn([reply([toolUse('t1', 'read_file', { path: 'a.txt' })]), answer('done')]);
    h = await harness({ store: 'file', files: { 'a.txt': 'one\n' }, script });
    const done = await h.runtime().start({ task: 'read', settings: SETTINGS });
    const view = buildRunView(await h.store.readRun(done.runId), new Map(), false);
    const step2 = view.steps.find((s) => s.stepId === 2)!;
    assert.equal(step2.restorePoint, 'start of step 2');
    const { fork } = await actions(h).restoreCheckpoint(done.runId, step2.checkpointId, 'session');
    const after = buildRunView(await h.store.readRun(fork!.runId), new Map(), false);
    assert.deepEqual(
      after.steps.filter((s) => s.label === 'before_model').map((s) => s.stepId),
      [],
      'no step is left that only has its before_model save point',
    );
    assert.deepEqual(
      after.steps.map((s) => s.stepId),
      [0, 1],
    );
    const resumed = await h.runtime().resume(fork!.runId);
    assert.equal(resumed.status, 'completed', resumed.reason);
    assertEveryRequestValid(h.fake);
  });
});
