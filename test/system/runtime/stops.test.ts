import { strict as assert } from 'node:assert';
import { atToolResultsMessage, crashingStore } from '../../unit/runtime/crash-store';
import {
  answer,
  byTurn,
  harness,
  lastToolResults,
  reply,
  ScriptedApprover,
  SETTINGS,
  startedCalls,
  toolUse,
  type Harness,
} from '../../unit/runtime/harness';

describe('runtime stops, limits and approvals (real SDK, loopback server)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('parallel tool_use blocks get one user message with all results in tool_use order', async () => {
    h = await harness({
      files: { 'a.txt': 'A', 'b.txt': 'B' },
      script: [
        reply([
          toolUse('t1', 'read_file', { path: 'b.txt' }),
          toolUse('t2', 'read_file', { path: 'a.txt' }),
          toolUse('t3', 'search_text', { pattern: 'A' }),
        ]),
        answer('ok'),
      ],
    });
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    const records = await h.records(outcome.runId);
    const afterModel = records.findIndex((r) => r.type === 'checkpoint' && r.label === 'after_model');
    const group = records
      .filter((r) => r.seq <= records[afterModel]!.seq && r.type === 'ledger')
      .map((r) => r.type === 'ledger' && r.entry.status);
    assert.deepEqual(group, ['planned', 'planned', 'planned'], 'every tool_use is planned in the after_model group');
    assert.deepEqual(
      lastToolResults(h.fake, 1).map((r) => [r.tool_use_id, r.content]),
      [
        ['t1', 'B'],
        ['t2', 'A'],
        [
          't3',
          'a.txt\n  1: A\n[1 matching line in 1 file; complete: every text file under "." was searched (ignore files honoured; binary files and files over 1 MiB skipped)]',
        ],
      ],
    );
  });

  it('cancellation pauses at the next safe point; resume completes with no tool run twice', async () => {
    const controller = new AbortController();
    h = await harness({
      files: { 'a.txt': 'A' },
      approver: new ScriptedApprover(['allow_once']),
      script: byTurn([
        reply([toolUse('t1', 'read_file', { path: 'a.txt' }), toolUse('t2', 'run_command', { command: 'echo once' })]),
        answer('ok'),
      ]),
    });
    const runtime = h.runtime();
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'tool_finished' && e.checkpoint.callId === 't1') controller.abort();
    });
    const first = await runtime.start({ task: 'x', settings: SETTINGS }, controller.signal);
    assert.deepEqual(first, { runId: first.runId, status: 'paused', reason: 'cancelled' });
    assert.equal((await h.store.readRun(first.runId)).status, 'paused');
    const second = await h.runtime().resume(first.runId);
    assert.equal(second.status, 'completed');
    assert.deepEqual(startedCalls(h.events), ['t1', 't2']);
    assert.deepEqual(h.commands.commands, ['echo once']);
  });

  it('approvals are persisted: a deny is never asked again, allow_for_run is not asked again', async () => {
    const approver = new ScriptedApprover(['deny', 'allow_for_run']);
    h = await harness({
      approver,
      script: byTurn([
        reply([toolUse('t1', 'run_command', { command: 'echo denied' })]),
        reply([toolUse('t2', 'run_command', { command: 'echo two' })]),
        reply([toolUse('t3', 'run_command', { command: 'echo three' })]),
        answer('ok'),
      ]),
    });
    const first = await h.runtime({ store: crashingStore(h.store, atToolResultsMessage()) }).start({ task: 'x', settings: SETTINGS });
    assert.equal(first.status, 'paused');
    const second = await h.runtime().resume(first.runId);
    assert.equal(second.status, 'completed');
    assert.deepEqual(
      approver.approvals.map((a) => a.callId),
      ['t1', 't2'],
    );
    assert.deepEqual(h.commands.commands, ['echo two', 'echo three']);
    assert.match(lastToolResults(h.fake, 1)[0]!.content, /The user denied this call/);
    const state = await h.store.readRun(first.runId);
    assert.deepEqual(
      state.approvals.map((a) => [a.target, a.decision]),
      [
        ['t1', 'deny'],
        ['tool:run_command', 'allow_for_run'],
      ],
    );
  });
});
