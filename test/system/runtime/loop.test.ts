import { strict as assert } from 'node:assert';
import {
  answer,
  harness,
  lastToolResults,
  readText,
  reply,
  savePoints,
  ScriptedApprover,
  SETTINGS,
  toolUse,
  type Harness,
} from '../../unit/runtime/harness';

describe('runtime loop (real SDK, loopback server)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  for (const storeKind of ['memory', 'file'] as const) {
    it(`reads, edits and runs a command with save points in order (${storeKind} store)`, async () => {
      h = await harness({
        store: storeKind,
        files: { 'src/a.txt': 'hello world\n' },
        approver: new ScriptedApprover(['allow_once']),
        script: [
          reply([{ type: 'text', text: 'Reading.' }, toolUse('t1', 'read_file', { path: 'src/a.txt' })]),
          reply([toolUse('t2', 'edit_file', { path: 'src/a.txt', old_string: 'world', new_string: 'there' })]),
          reply([toolUse('t3', 'run_command', { command: 'cat src/a.txt' })]),
          answer('Done.'),
        ],
      });
      const outcome = await h.runtime().start({ task: 'greet', settings: SETTINGS });
      assert.equal(outcome.status, 'completed', outcome.reason);
      assert.equal(readText(h.root, 'src/a.txt'), 'hello there\n');
      assert.deepEqual(h.commands.commands, ['cat src/a.txt']);
      const records = await h.records(outcome.runId);
      assert.deepEqual(savePoints(records), [
        'user_message',
        'run_start',
        'before_model',
        'after_model',
        'tool_started:t1',
        'tool_finished:t1',
        'user_message',
        'before_model',
        'after_model',
        'tool_started:t2',
        'file_written:t2',
        'tool_finished:t2',
        'user_message',
        'before_model',
        'after_model',
        'tool_approved:t3',
        'tool_started:t3',
        'tool_finished:t3',
        'user_message',
        'before_model',
        'after_model',
        'run_end',
      ]);
      assert.equal(lastToolResults(h.fake, 1)[0]!.content, 'hello world\n');
      assert.match(lastToolResults(h.fake, 3)[0]!.content, /exit code 0[\s\S]*hello there/);
      const state = await h.store.readRun(outcome.runId);
      assert.equal(state.status, 'completed');
      assert.deepEqual(
        state.ledger.map((e) => [e.callId, e.status]),
        [
          ['t1', 'succeeded'],
          ['t2', 'succeeded'],
          ['t3', 'succeeded'],
        ],
      );
      assert.equal(state.patches.length, 1);
      assert.deepEqual(state.ledger[1]!.patchIds, [state.patches[0]!.patchId]);
      assert.equal(state.budget.turns, 4);
      assert.equal(state.budget.inputTokens, 400);
      assert.ok(state.budget.costUsd > 0);
      assert.equal(h.approver.approvals.length, 1);
      assert.ok(h.fake.requests.every((r) => r.apiKeySeen === 'sk-test-key'));
    });
  }
});
