import { strict as assert } from 'node:assert';
import { canonicalJson, inputHash } from '../../../src/core/ledger/canonical';
import type { LedgerEntry, LedgerStatus } from '../../../src/core/ledger/schema';
import { hasRecordedResult, IllegalTransitionError, isLegalTransition, transition } from '../../../src/core/ledger/transitions';

function entry(status: LedgerStatus): LedgerEntry {
  return {
    callId: 'toolu_1',
    stepId: 1,
    toolName: 'read_file',
    inputHash: 'h',
    status,
    idempotency: 'idempotent',
    replayPolicy: 'auto',
    sideEffects: [],
    plannedAt: 1,
    compensation: 'none needed',
  };
}

const ALL: LedgerStatus[] = ['planned', 'approved', 'started', 'succeeded', 'failed', 'uncertain'];
const LEGAL = new Set([
  'planned>approved',
  'planned>started',
  'planned>failed',
  'approved>started',
  'approved>failed',
  'started>succeeded',
  'started>failed',
  'started>uncertain',
  'uncertain>started',
  'uncertain>succeeded',
  'uncertain>failed',
  'uncertain>uncertain',
]);

describe('ledger transitions', () => {
  for (const from of ALL) {
    for (const to of ALL) {
      const legal = LEGAL.has(`${from}>${to}`);
      it(`${from} -> ${to} is ${legal ? 'legal' : 'refused'}`, () => {
        assert.equal(isLegalTransition(from, to), legal);
        if (legal && !(from === 'uncertain' && to === 'uncertain')) assert.equal(transition(entry(from), to).status, to);
        else if (!legal) assert.throws(() => transition(entry(from), to), IllegalTransitionError);
      });
    }
  }

  it('uncertain -> uncertain only attaches a result', () => {
    assert.throws(() => transition(entry('uncertain'), 'uncertain'), IllegalTransitionError);
    const next = transition(entry('uncertain'), 'uncertain', { resultRef: 'blob', reason: 'reported unknown' });
    assert.equal(next.resultRef, 'blob');
    assert.ok(hasRecordedResult(next));
  });

  it('keeps identity fields and applies changes', () => {
    const next = transition(entry('planned'), 'started', { startedAt: 5, intents: [{ path: 'a', beforeHash: 'absent', afterHash: 'x' }] });
    assert.equal(next.callId, 'toolu_1');
    assert.equal(next.startedAt, 5);
    assert.equal(next.intents?.length, 1);
    assert.ok(!hasRecordedResult(next));
  });
});

describe('inputHash', () => {
  it('ignores key order and undefined members', () => {
    assert.equal(canonicalJson({ b: 1, a: [1, { d: 2, c: undefined }] }), '{"a":[1,{"d":2}],"b":1}');
    assert.equal(inputHash({ path: 'a', n: 1 }), inputHash({ n: 1, path: 'a' }));
    assert.notEqual(inputHash({ path: 'a' }), inputHash({ path: 'b' }));
    assert.match(inputHash('x'), /^[0-9a-f]{64}$/);
  });
});
