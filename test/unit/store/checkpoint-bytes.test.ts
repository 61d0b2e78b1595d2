import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { StoreError } from '../../../src/core/store/contract';
import { encodeGroup, scanJournal } from '../../../src/core/store/journal-format';
import { StoreRecord, type StoredRecord } from '../../../src/core/store/records';

// The byte reader of checkpoint records must agree with JSON.parse + the schema on every input:
// the same record (fields and their order) when the schema accepts it, damage when it does not.
// A scan reads a checkpoint only up to its stepId; the record is read (and checked) when asked for.

const FILE = 'runs/r/journal.jsonl';
const RUN = {
  v: 1,
  at: 5,
  type: 'run',
  runId: 'r',
  task: 't',
  createdAt: 1,
  workspaceFolders: [],
  git: { isRepo: false, dirtyPaths: [] },
  settings: { model: 'm', provider: 'p', maxTurns: 5, maxOutputTokensPerCall: 10 },
};

/** A journal of the run record and `raw`, framed as the writer frames it (schemas not checked). */
function journalOf(raw: Record<string, unknown>): Uint8Array {
  const records = [RUN, raw].map((r, i) => ({ ...r, seq: i + 1 }) as unknown as StoredRecord);
  return Buffer.concat([encodeGroup(records.slice(0, 1)), encodeGroup(records.slice(1))]);
}

/** The records of a journal, or the damage that its scan found or that reading its records threw (a damaged StoreError naming the line). */
function readBack(bytes: Uint8Array): { records: StoredRecord[]; damage?: string } {
  const scan = scanJournal(bytes, FILE);
  const kept: StoredRecord[] = [];
  for (let i = 0; i < scan.log.length; i++) {
    try {
      kept.push(scan.log.record(i));
    } catch (error) {
      assert.ok(
        error instanceof StoreError && error.code === 'damaged' && error.file === FILE && typeof error.offset === 'number',
        String(error),
      );
      return { records: kept, damage: error.message };
    }
  }
  return { records: kept, ...(scan.damage ? { damage: scan.damage.message } : {}) };
}

function expectSameAsSchema(raw: Record<string, unknown>): void {
  const scan = readBack(journalOf(raw));
  const parsed = StoreRecord.safeParse(JSON.parse(JSON.stringify(raw)));
  if (!parsed.success) {
    assert.ok(scan.damage, `accepted what the schema rejects: ${JSON.stringify(raw)}`);
    return;
  }
  assert.equal(scan.damage, undefined);
  const read = scan.records[1];
  assert.deepEqual(read, { ...parsed.data, seq: 2 });
  assert.equal(JSON.stringify(read), JSON.stringify({ ...parsed.data, seq: 2 }), 'fields in the schema order');
}

const budget = { turns: 3, maxTurns: 50, inputTokens: 300, outputTokens: 30, tokensUsed: 110, costUsd: 0.30000000000000004 };
const valid = {
  v: 1,
  at: 1_700_000_000_123,
  type: 'checkpoint',
  checkpointId: 'cp-1',
  stepId: 3,
  label: 'after_model',
  messageCount: 4,
  patchCount: 1,
  status: 'running',
  budget,
};

describe('checkpoint records read from their bytes', () => {
  it('read back exactly as the schema outputs them, with and without every optional field', () => {
    expectSameAsSchema(valid);
    expectSameAsSchema({ ...valid, callId: 'tu-1', stopReason: 'tool_use', budget: { ...budget, maxTokens: 9000, maxCostUsd: 1.5e-7 } });
    expectSameAsSchema({ ...valid, budget: { ...budget, costUsd: 0 } });
    expectSameAsSchema({ ...valid, checkpointId: 'cp "quoted" ✓', callId: 'é' });
    expectSameAsSchema({ ...valid, extra: 'dropped by the schema' });
  });

  it('fields the schema rejects are damage, never a record', () => {
    for (const bad of [
      { label: 'bogus' },
      { status: 'asleep' },
      { checkpointId: '' },
      { messageCount: -1 },
      { stepId: 1.5 },
      { patchCount: '1' },
      { budget: { ...budget, maxTurns: 0 } },
      { budget: { ...budget, costUsd: -0.5 } },
      { budget: { ...budget, maxTokens: 0 } },
      { budget: { ...budget, maxCostUsd: 0 } },
      { budget: { ...budget, turns: undefined } },
      { callId: 7 },
      { stopReason: null },
    ]) {
      expectSameAsSchema({ ...valid, ...bad });
    }
  });

  it('agrees with JSON.parse and the schema on generated records', () => {
    const num = fc.oneof(
      fc.integer({ min: -3, max: 2 ** 53 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constant(1e21),
      fc.constant('1'),
    );
    const str = fc.oneof(fc.string(), fc.constantFrom('running', 'paused', 'before_model', 'tool_finished', 'run_end', ''));
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
    const budgets = fc.record({
      turns: num,
      maxTurns: num,
      inputTokens: num,
      outputTokens: num,
      tokensUsed: num,
      costUsd: num,
      maxTokens: maybe(num),
      maxCostUsd: maybe(num),
    });
    const checkpoints = fc.record({
      v: fc.constant(1),
      at: num,
      type: fc.constant('checkpoint'),
      checkpointId: str,
      stepId: num,
      label: str,
      messageCount: num,
      patchCount: num,
      callId: maybe(str),
      status: str,
      budget: budgets,
      stopReason: maybe(str),
    });
    fc.assert(
      fc.property(checkpoints, (raw) => expectSameAsSchema(raw as Record<string, unknown>)),
      { numRuns: 400 },
    );
  });

  it('checkpoints in a row that share or change their budget read as the schema reads each', () => {
    const pool = [
      budget,
      { ...budget, turns: 4 },
      { ...budget, maxTokens: 9000 },
      { ...budget, costUsd: 0.3 },
      { ...budget, maxTurns: 0 },
      { ...budget, costUsd: '0.3' },
    ];
    const rows = fc.array(fc.record({ budget: fc.constantFrom(...pool), stepId: fc.nat(5) }), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(rows, (picked) => {
        const raws = picked.map((row, i) => ({ ...valid, checkpointId: `cp-${i}`, stepId: row.stepId, budget: row.budget }));
        const records = [RUN, ...raws].map((r, i) => ({ ...r, seq: i + 1 }) as unknown as StoredRecord);
        const scan = readBack(Buffer.concat(records.map((record) => encodeGroup([record]))));
        const firstBad = raws.findIndex((raw) => !StoreRecord.safeParse(raw).success);
        const good = firstBad === -1 ? raws : raws.slice(0, firstBad);
        assert.deepEqual(
          scan.records.slice(1),
          good.map((raw, i) => ({ ...StoreRecord.parse(raw), seq: i + 2 })),
        );
        assert.equal(
          scan.damage !== undefined,
          firstBad !== -1,
          'a budget the schema rejects is damage even after an identical-looking one',
        );
      }),
      { numRuns: 300 },
    );
  });
});
