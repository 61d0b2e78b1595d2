import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { LedgerEntry } from '../../../src/core/ledger/schema';
import { checkedLedgerEntry } from '../../../src/core/store/ledger-entry-check';

// The hand check of ledger entries must never accept what the schema rejects, and when it
// accepts, return exactly what the schema returns (fields and their order).

function expectSameAsSchema(raw: unknown): boolean {
  const json = JSON.parse(JSON.stringify(raw)) as unknown;
  const checked = checkedLedgerEntry(json);
  const parsed = LedgerEntry.safeParse(json);
  if (checked === undefined) return false;
  assert.ok(parsed.success, `accepted what the schema rejects: ${JSON.stringify(raw)}`);
  assert.equal(JSON.stringify(checked), JSON.stringify(parsed.data));
  assert.deepEqual(checked, parsed.data);
  return true;
}

const full = {
  callId: 'tu-1',
  stepId: 3,
  toolName: 'edit_file',
  inputHash: 'a'.repeat(64),
  status: 'succeeded',
  idempotency: 'conditional',
  replayPolicy: 'auto',
  sideEffects: ['writes src/index.ts'],
  plannedAt: 1000,
  startedAt: 1005,
  finishedAt: 1050,
  resultRef: 'f'.repeat(64),
  isError: false,
  error: 'none',
  compensation: 'roll back the patch',
  reason: 'ok',
  patchIds: ['p1'],
  intents: [{ path: 'src/index.ts', beforeHash: 'b', afterHash: 'c', beforeBlob: 'x', afterBlob: 'y' }],
};

describe('ledger entries checked by hand', () => {
  it("accepts the schema's entries with the schema's output, minimal and full", () => {
    const {
      startedAt: _s,
      finishedAt: _f,
      resultRef: _r,
      isError: _i,
      error: _e,
      reason: _re,
      patchIds: _p,
      intents: _in,
      ...minimal
    } = full;
    assert.ok(expectSameAsSchema(minimal));
    assert.ok(expectSameAsSchema(full));
    assert.ok(expectSameAsSchema({ ...full, intents: [{ path: 'p', beforeHash: '', afterHash: '' }], sideEffects: [] }));
  });

  it("returns the schema's order for fields in any other order (the entry and its intents)", () => {
    const reversed = (raw: object) => Object.fromEntries(Object.entries(raw).reverse());
    assert.ok(expectSameAsSchema(reversed(full)));
    assert.ok(expectSameAsSchema({ ...full, intents: full.intents.map(reversed) }));
    assert.ok(expectSameAsSchema(reversed({ ...full, intents: full.intents.map(reversed) })));
  });

  it('leaves to the schema every entry it is not sure of', () => {
    for (const bad of [
      { callId: '' },
      { stepId: -1 },
      { stepId: 1.5 },
      { stepId: 2 ** 53 },
      { status: 'done' },
      { idempotency: 'maybe' },
      { replayPolicy: 'always' },
      { sideEffects: [1] },
      { sideEffects: 'x' },
      { plannedAt: '1' },
      { startedAt: null },
      { isError: 'no' },
      { patchIds: [null] },
      { intents: [{ path: 'p', beforeHash: 'b' }] },
      { intents: [{ ...full.intents[0], extra: 1 }] },
      { extra: true },
      { compensation: undefined },
    ]) {
      assert.equal(checkedLedgerEntry(JSON.parse(JSON.stringify({ ...full, ...bad }))), undefined, JSON.stringify(bad));
    }
    assert.equal(checkedLedgerEntry(null), undefined);
    assert.equal(checkedLedgerEntry([full]), undefined);
    assert.equal(checkedLedgerEntry(JSON.parse(`{"__proto__":{},${JSON.stringify(full).slice(1)}`)), undefined);
  });

  it('agrees with the schema on generated entries', () => {
    const value = fc.oneof(
      fc.string(),
      fc.integer({ min: -2, max: 2 ** 54 }),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
    );
    const pick = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: value });
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
    const intentArb = fc.record({
      path: pick(fc.string()),
      beforeHash: pick(fc.string()),
      afterHash: pick(fc.string()),
      beforeBlob: maybe(pick(fc.string())),
      afterBlob: maybe(pick(fc.string())),
    });
    const entries = fc.record({
      callId: pick(fc.string()),
      stepId: pick(fc.nat()),
      toolName: pick(fc.string()),
      inputHash: pick(fc.string()),
      status: pick(fc.constantFrom('planned', 'approved', 'started', 'succeeded', 'failed', 'uncertain')),
      idempotency: pick(fc.constantFrom('idempotent', 'conditional', 'non_idempotent')),
      replayPolicy: pick(fc.constantFrom('auto', 'ask', 'never')),
      sideEffects: pick(fc.array(fc.string(), { maxLength: 3 })),
      plannedAt: pick(fc.double({ noNaN: true, noDefaultInfinity: true })),
      startedAt: maybe(pick(fc.nat())),
      finishedAt: maybe(pick(fc.nat())),
      resultRef: maybe(pick(fc.string())),
      isError: maybe(pick(fc.boolean())),
      error: maybe(pick(fc.string())),
      compensation: pick(fc.string()),
      reason: maybe(pick(fc.string())),
      patchIds: maybe(pick(fc.array(fc.string(), { maxLength: 2 }))),
      intents: maybe(pick(fc.array(intentArb, { maxLength: 2 }))),
    });
    let accepted = 0;
    fc.assert(
      fc.property(entries, (raw) => void (accepted += expectSameAsSchema(raw) ? 1 : 0)),
      { numRuns: 500 },
    );
    assert.ok(accepted > 0, 'some generated entries are valid');
  });
});
