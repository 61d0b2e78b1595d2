import { strict as assert } from 'node:assert';
import { STATUS_UNKNOWN_MESSAGE } from '../../../src/core/runtime/reconcile';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { atSavePoint, crashThenResume as crashAndResume, noteOf as recoveryNote } from '../../unit/runtime/crash-store';

type Shifted<T extends unknown[]> = T extends [unknown, ...infer R] ? R : never;
import {
  answer,
  byTurn,
  lastToolResults,
  reply,
  requestMessages,
  ScriptedApprover,
  startedCalls,
  toolUse,
  type Harness,
} from '../../unit/runtime/harness';

type Choice = 'run_again' | 'mark_done' | 'report_unknown' | null;

describe('resume and reconciliation', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const crashThenResume = (...args: Shifted<Parameters<typeof crashAndResume>>) => crashAndResume((x) => (h = x), ...args);
  const noteOf = (n: number) => recoveryNote(h!, n);

  for (const [choice, expectRuns, expectStatus] of [
    [null, 1, 'uncertain'],
    ['report_unknown', 1, 'uncertain'],
    ['mark_done', 1, 'succeeded'],
    ['run_again', 2, 'succeeded'],
  ] as [Choice, number, string][]) {
    it(`a dangling run_command is never re-run automatically (person chooses ${String(choice)})`, async () => {
      const approver = new ScriptedApprover(['allow_once'], [choice]);
      const { runId, outcome } = await crashThenResume(atSavePoint('tool_finished', 't1'), {
        approver,
        script: byTurn([reply([toolUse('t1', 'run_command', { command: 'echo ran' })]), answer('ok')]),
      });
      assert.equal(outcome.status, 'completed');
      assert.equal(h!.commands.commands.length, expectRuns);
      assert.equal(approver.uncertain.length, 1);
      const [result] = lastToolResults(h!.fake, 1);
      if (choice === null || choice === 'report_unknown') {
        assert.equal(result!.content, STATUS_UNKNOWN_MESSAGE);
        assert.equal(result!.is_error, true);
        assert.match(noteOf(1), /outcome is unknown[\s\S]*run_command t1/);
      }
      const state = await h!.store.readRun(runId);
      assert.equal(state.ledger[0]!.status, expectStatus);
    });
  }

  it('policy never: the model receives the status-unknown result and nobody is asked', async () => {
    const approver = new ScriptedApprover([], []);
    const tools = createToolRegistry({ overrides: { run_command: { replayPolicy: 'never' } } });
    const { outcome } = await crashThenResume(
      atSavePoint('tool_finished', 't1'),
      { approver, script: byTurn([reply([toolUse('t1', 'run_command', { command: 'true' })]), answer('ok')]) },
      undefined,
      { tools },
    );
    assert.equal(outcome.status, 'completed');
    assert.equal(h!.commands.commands.length, 1);
    assert.equal(approver.uncertain.length, 0);
    assert.equal(approver.approvals.length, 0);
    assert.equal(lastToolResults(h!.fake, 1)[0]!.content, STATUS_UNKNOWN_MESSAGE);
  });

  it('several dangling calls of mixed classes in one step; messages before the note are byte-identical', async () => {
    const approver = new ScriptedApprover(['allow_once'], [null]);
    const { runId, outcome } = await crashThenResume(atSavePoint('tool_finished', 't3'), {
      approver,
      files: { 'a.txt': 'one\n', 'b.txt': 'bee\n' },
      script: byTurn([
        reply([toolUse('t0', 'read_file', { path: 'b.txt' })]),
        reply([
          { type: 'text', text: 'Several things at once.' },
          toolUse('t1', 'read_file', { path: 'b.txt' }),
          toolUse('t2', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' }),
          toolUse('t3', 'run_command', { command: 'echo hi' }),
          toolUse('t4', 'list_dir', { path: '.' }),
        ]),
        answer('ok'),
      ]),
    });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(h!.commands.commands, ['echo hi']);
    assert.deepEqual(startedCalls(h!.events), ['t0', 't1', 't2', 't3', 't4']);
    const results = lastToolResults(h!.fake, 2);
    assert.deepEqual(
      results.map((r) => r.tool_use_id),
      ['t1', 't2', 't3', 't4'],
    );
    assert.equal(results[0]!.content, 'bee\n');
    assert.equal(results[1]!.content, 'edited a.txt');
    assert.equal(results[2]!.content, STATUS_UNKNOWN_MESSAGE);
    assert.match(results[3]!.content, /a\.txt {2}4 B\nb\.txt {2}4 B/);
    const note = noteOf(2);
    assert.match(note, /already succeeded[^\n]*\n- read_file t1[^\n]*\n- edit_file t2/);
    assert.match(note, /outcome is unknown[^\n]*\n- run_command t3: run: echo hi/);
    assert.match(note, /run after the resume[^\n]*\n- list_dir t4/);
    assert.match(note, /last fully completed step is step 1/);
    const before = requestMessages(h!.fake, 1);
    const after = requestMessages(h!.fake, 2);
    assert.equal(JSON.stringify(after.slice(0, before.length)), JSON.stringify(before));
    assert.equal(after.length, before.length + 2);
    const state = await h!.store.readRun(runId);
    assert.deepEqual(
      state.ledger.map((e) => e.status),
      ['succeeded', 'succeeded', 'succeeded', 'uncertain', 'succeeded'],
    );
  });
});
