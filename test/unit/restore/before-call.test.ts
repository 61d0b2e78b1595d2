import { strict as assert } from 'node:assert';
import { silentLog, type ApprovalDecision, type Approver } from '../../../src/core/ports';
import { RESTORED_CALL_REASON } from '../../../src/core/runtime/calls';
import { ApprovalUnavailableError, ResumeError } from '../../../src/core/runtime/errors';
import { RestoreActions } from '../../../src/host/vscode/restore/restore-actions';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { assertEveryRequestValid } from '../../support/valid-requests';
import {
  answer,
  byTurn,
  harness,
  lastToolResults,
  readText,
  reply,
  requestMessages,
  ScriptedApprover,
  SETTINGS,
  toolUse,
  type Harness,
} from '../runtime/harness';

// Going back to before a call, then on: a new instruction answers the calls the restore went back
// over as not run (appended results, the kept answer untouched), and Resume asks before running
// them again (an undo call is asked whatever was allowed: test/system/restore/undo-asked.test.ts).

const never = () => new AbortController().signal;
const EDIT = { path: 'a.txt', old_string: 'one', new_string: 'two' };

const actions = (h: Harness) =>
  new RestoreActions({
    store: h.store,
    workspace: new NodeWorkspace({ roots: [h.root] }),
    clock: { now: () => Date.now() },
    log: silentLog,
    isRunning: () => false,
  });

async function checkpointBefore(h: Harness, runId: string, callId: string): Promise<string> {
  const view = buildRunView(await h.store.readRun(runId), new Map(), false);
  const call = view.steps.flatMap((s) => s.calls).find((c) => c.callId === callId);
  assert.ok(call?.checkpointId, `call ${callId} has a point before it`);
  return call.checkpointId;
}

/** An edit that completed, then "Restore to before this call" with Both: the file is back, the fork is returned. */
async function restoredBeforeEdit(h: Harness): Promise<string> {
  const done = await h.runtime().start({ task: 'edit', settings: SETTINGS });
  assert.equal(done.status, 'completed', done.reason);
  assert.equal(readText(h.root, 'a.txt'), 'two\n');
  const { fork } = await actions(h).restoreCheckpoint(done.runId, await checkpointBefore(h, done.runId, 't1'), 'both');
  assert.ok(fork);
  assert.equal(readText(h.root, 'a.txt'), 'one\n');
  return fork.runId;
}

describe('restore to before a call, then on', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a new instruction is taken: the call is answered as not run with the words, the edit is not made again', async () => {
    h = await harness({
      store: 'file',
      files: { 'a.txt': 'one\n' },
      script: byTurn([reply([toolUse('t1', 'edit_file', EDIT)]), answer('fixed'), answer('left it as one')]),
    });
    const forkId = await restoredBeforeEdit(h);
    const first = h.fake.requests.length;
    const outcome = await h.runtime().continue(forkId, 'keep it as one, just tell me why', never(), { moreTurns: 5 });
    assert.equal(outcome.status, 'completed', outcome.reason);
    assert.equal(readText(h.root, 'a.txt'), 'one\n', 'the call the restore went back over was not run');

    const [result] = lastToolResults(h.fake, first);
    assert.equal(result?.tool_use_id, 't1');
    assert.equal(result?.is_error, true);
    assert.match(
      String(result?.content),
      /^Not run: the person restored the run to before this call and said: "keep it as one, just tell me why"/,
    );
    const sent = requestMessages(h.fake, first) as { role: string; content: { type: string; text?: string }[] }[];
    const last = sent.at(-1)!;
    assert.equal(last.content.at(-1)?.text, 'keep it as one, just tell me why', 'the words follow the results, as the person wrote them');
    // The kept answer goes out as the first request sent it: the results are appended, nothing is edited.
    assert.deepEqual(sent.at(-2), requestMessages(h.fake, 1).at(-2));
    assertEveryRequestValid(h.fake);

    const t1 = (await h.store.readRun(forkId)).ledger.find((e) => e.callId === 't1');
    assert.equal(t1?.status, 'failed');
    assert.equal(t1?.reason, 'not run: the person gave a new instruction instead');
    const row = buildRunView(await h.store.readRun(forkId), new Map(), false)
      .steps.flatMap((s) => s.calls)
      .find((c) => c.callId === 't1');
    assert.equal(row?.notRun, true, 'the Timeline shows it as not run');
    assert.equal(row?.isError, false, 'not as a failure');
  });

  it('Resume asks before running the call again, whatever its policy; a denial leaves the file as restored', async () => {
    h = await harness({
      store: 'file',
      files: { 'a.txt': 'one\n' },
      script: byTurn([reply([toolUse('t1', 'edit_file', EDIT)]), answer('fixed'), answer('not made')]),
      approver: new ScriptedApprover(['deny']),
    });
    const forkId = await restoredBeforeEdit(h);
    assert.equal(h.approver.approvals.length, 0, 'edit_file runs without asking in the first run');
    const resumed = await h.runtime().resume(forkId, never());
    assert.equal(resumed.status, 'completed', resumed.reason);
    assert.deepEqual(
      h.approver.approvals.map((a) => [a.callId, a.reason]),
      [['t1', RESTORED_CALL_REASON]],
    );
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    assertEveryRequestValid(h.fake);
  });

  it('a run stopped before a call (nobody could approve it) takes a new instruction: the call is answered as not run', async () => {
    const unavailable: Approver = {
      async approve(): Promise<ApprovalDecision> {
        throw new ApprovalUnavailableError('nobody to ask');
      },
      async askUncertain() {
        return null;
      },
    };
    h = await harness({
      store: 'file',
      script: byTurn([reply([toolUse('t1', 'run_command', { command: 'echo hi > hi.txt' })]), answer('ok, not running it')]),
    });
    const paused = await h.runtime({ approver: unavailable }).start({ task: 'say hi', settings: SETTINGS });
    assert.equal(paused.status, 'paused', paused.reason);
    const first = h.fake.requests.length;
    const outcome = await h.runtime().continue(paused.runId, 'do not run commands', never(), { moreTurns: 5 });
    assert.equal(outcome.status, 'completed', outcome.reason);
    assert.match(String(lastToolResults(h.fake, first)[0]?.content), /^Not run: the person stopped the run before this call and said/);
    assert.throws(() => readText(h!.root, 'hi.txt'));
    assertEveryRequestValid(h.fake);
  });

  it('an empty instruction changes nothing: the fork still waits, its calls unanswered', async () => {
    h = await harness({
      store: 'file',
      files: { 'a.txt': 'one\n' },
      script: byTurn([reply([toolUse('t1', 'edit_file', EDIT)]), answer('fixed')]),
    });
    const forkId = await restoredBeforeEdit(h);
    const before = (await h.store.readRecords(forkId)).length;
    await assert.rejects(h.runtime().continue(forkId, '  ', never(), { moreTurns: 5 }), ResumeError);
    assert.equal((await h.store.readRecords(forkId)).length, before);
  });
});
