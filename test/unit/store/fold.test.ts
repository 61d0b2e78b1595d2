import { strict as assert } from 'node:assert';
import { StoreError } from '../../../src/core/store/contract';
import { BranchNeedsRecords, foldRecord, runStateOf, startFold } from '../../../src/core/store/fold';
import { foldRecords } from '../../../src/core/store/history';
import type { NewRecord, StoredRecord } from '../../../src/core/store/records';
import { stampRecords } from '../../../src/core/store/stamp';
import { checkpoint, ledgerEntry, message, runInput } from './fixtures';

function journal(records: NewRecord[]): StoredRecord[] {
  return stampRecords([{ ...runInput('r1'), type: 'run' }, ...records], 1, 5);
}

const twoSteps: NewRecord[] = [
  checkpoint('c0', 0, 'run_start', 0),
  message(0, 0, 'user', 'task'),
  checkpoint('c1', 1, 'before_model', 1),
  message(1, 1, 'assistant', 'calling a tool'),
  ledgerEntry('call-1', 1, 'planned'),
  checkpoint('c2', 1, 'after_model', 2),
  ledgerEntry('call-1', 1, 'started'),
  ledgerEntry('call-1', 1, 'succeeded'),
  message(2, 1, 'user', 'result'),
  checkpoint('c3', 2, 'before_model', 3, 2),
  message(3, 2, 'assistant', 'second call'),
  ledgerEntry('call-2', 2, 'planned'),
  checkpoint('c4', 2, 'after_model', 4, 3),
];

describe('fold of records (fold.ts)', () => {
  it('folds messages, ledger (latest entry per callId), checkpoints, budget, stepId', () => {
    const state = foldRecords(journal(twoSteps));
    assert.equal(state.messages.length, 4);
    assert.deepEqual(
      state.ledger.map((e) => [e.callId, e.status]),
      [
        ['call-1', 'succeeded'],
        ['call-2', 'planned'],
      ],
    );
    assert.deepEqual(
      state.checkpoints.map((c) => c.checkpointId),
      ['c0', 'c1', 'c2', 'c3', 'c4'],
    );
    assert.equal(state.budget.turns, 3);
    assert.equal(state.stepId, 2);
    assert.equal(state.lastSeq, twoSteps.length + 1);
    assert.equal(state.status, 'running');
  });

  it('gives the state right after an earlier checkpoint', () => {
    const state = foldRecords(journal(twoSteps), { atCheckpoint: 'c2' });
    assert.equal(state.messages.length, 2);
    assert.deepEqual(
      state.ledger.map((e) => e.status),
      ['planned'],
    );
    assert.deepEqual(
      state.checkpoints.map((c) => c.checkpointId),
      ['c0', 'c1', 'c2'],
    );
    assert.equal(state.lastSeq, 7);
  });

  it('a message with index i replaces the history from i on', () => {
    const state = foldRecords(journal([message(0, 0, 'user', 'a'), message(1, 0, 'assistant', 'b'), message(1, 0, 'assistant', 'B')]));
    assert.deepEqual(
      state.messages.map((m) => (m.content as { text: string }[])[0]!.text),
      ['a', 'B'],
    );
  });

  it('a message index beyond the history is refused', () => {
    assert.throws(
      () => foldRecords(journal([message(2, 0, 'user', 'a')])),
      (e: unknown) => e instanceof StoreError && e.code === 'invalid',
    );
  });

  it('a branch truncates the active history; global state survives; the run continues', () => {
    const records = journal([
      ...twoSteps,
      { type: 'note', kind: 'info', text: 'before branch' },
      { type: 'branch', checkpointId: 'c2', branchId: 'b1' },
      { type: 'budget', budget: { turns: 9, maxTurns: 50, inputTokens: 1, outputTokens: 1, tokensUsed: 1, costUsd: 1 } },
      message(2, 5, 'user', 'after branch'),
      checkpoint('c5', 5, 'before_model', 3, 10),
    ]);
    const state = foldRecords(records);
    assert.equal(state.messages.length, 3);
    assert.equal((state.messages[2]!.content as { text: string }[])[0]!.text, 'after branch');
    // call-1 was planned before c2 and keeps its latest status; call-2 was planned after it.
    assert.deepEqual(
      state.ledger.map((e) => [e.callId, e.status]),
      [['call-1', 'succeeded']],
    );
    assert.deepEqual(
      state.checkpoints.map((c) => c.checkpointId),
      ['c0', 'c1', 'c2', 'c5'],
    );
    assert.deepEqual(
      state.allCheckpoints.map((c) => c.checkpointId),
      ['c0', 'c1', 'c2', 'c3', 'c4', 'c5'],
    );
    assert.equal(state.notes.length, 1);
    assert.equal(state.budget.turns, 10);
    assert.equal(state.stepId, 5);
  });

  it('a branch to a checkpoint of an abandoned branch brings that history back', () => {
    const records = journal([
      ...twoSteps,
      { type: 'branch', checkpointId: 'c1', branchId: 'b1' },
      message(1, 3, 'assistant', 'other path'),
      checkpoint('c6', 3, 'after_model', 2),
      { type: 'branch', checkpointId: 'c3', branchId: 'b2' },
    ]);
    const state = foldRecords(records);
    assert.equal(state.messages.length, 3);
    assert.equal((state.messages[1]!.content as { text: string }[])[0]!.text, 'calling a tool');
    assert.deepEqual(
      state.checkpoints.map((c) => c.checkpointId),
      ['c0', 'c1', 'c2', 'c3'],
    );
    assert.equal(state.stepId, 2);
  });

  it('patches, patch state, status and run_end are global', () => {
    const patch = {
      patchId: 'p1',
      runId: 'r1',
      stepId: 1,
      toolCallId: 'call-1',
      path: 'a.txt',
      op: 'create' as const,
      beforeHash: 'absent',
      afterHash: 'a'.repeat(64),
      added: 1,
      removed: 0,
      binary: false,
      createdAt: 1,
      state: 'pending' as const,
    };
    const records = journal([
      ...twoSteps,
      { type: 'patch', patch },
      { type: 'branch', checkpointId: 'c0', branchId: 'b' },
      { type: 'patch_state', patchId: 'p1', state: 'rolled_back' },
      { type: 'status', status: 'paused', reason: 'budget' },
    ]);
    const state = foldRecords(records);
    assert.deepEqual(
      state.patches.map((p) => p.state),
      ['rolled_back'],
    );
    assert.equal(state.status, 'paused');
    assert.equal(state.statusReason, 'budget');
    assert.equal(state.messages.length, 0);
    const ended = foldRecords(journal([...twoSteps, { type: 'run_end', status: 'completed' }]));
    assert.equal(ended.status, 'completed');
    assert.equal(ended.ended?.status, 'completed');
  });

  it('an unknown checkpoint is not_found and a journal without run record is invalid', () => {
    assert.throws(
      () => foldRecords(journal(twoSteps), { atCheckpoint: 'nope' }),
      (e: unknown) => e instanceof StoreError && e.code === 'not_found',
    );
    assert.throws(
      () => foldRecords([]),
      (e: unknown) => e instanceof StoreError && e.code === 'invalid',
    );
  });

  it('folds 10,000 steps with branches in linear time', () => {
    const records: NewRecord[] = [];
    for (let step = 0; step < 10_000; step++) {
      records.push(
        message(step, step, 'user', 'x'),
        ledgerEntry(`k${step}`, step, 'planned'),
        checkpoint(`c${step}`, step, 'after_model', step + 1),
      );
      if (step % 1000 === 999) records.push({ type: 'branch', checkpointId: `c${step}`, branchId: `b${step}` });
    }
    const state = foldRecords(journal(records));
    assert.equal(state.messages.length, 10_000);
    assert.equal(state.ledger.length, 10_000);
  });

  it('folding one record at a time (state + record -> state) gives what the whole fold gives', () => {
    const records = journal([...twoSteps, { type: 'branch', checkpointId: 'c2', branchId: 'b' }, message(2, 3, 'user', 'again')]);
    const state = startFold(records[0], true);
    for (const record of records.slice(1)) foldRecord(state, record, { records });
    assert.deepEqual(runStateOf(state), foldRecords(records));
    assert.equal(runStateOf(state).messages.length, 3);
  });

  it('a branch without the records before it is refused, not folded wrong', () => {
    const records = journal([...twoSteps, { type: 'branch', checkpointId: 'c2', branchId: 'b' }]);
    const state = startFold(records[0]);
    for (const record of records.slice(1, -1)) foldRecord(state, record);
    assert.throws(() => foldRecord(state, records.at(-1)!), BranchNeedsRecords);
  });
});
