import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { encodeGroup, scanJournal } from '../../../src/core/store/journal-format';
import { readFrame } from '../../../src/core/store/journal-frame';
import { StoreRecord, type StoredRecord } from '../../../src/core/store/records';

// The byte reader of patch records must agree with JSON.parse + the schema on every input: the
// same record (fields and their order) when the schema accepts it, damage when it does not.

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

function journalOf(raw: Record<string, unknown>): Buffer {
  const records = [RUN, raw].map((r, i) => ({ ...r, seq: i + 1 }) as unknown as StoredRecord);
  return Buffer.concat([encodeGroup(records.slice(0, 1)), encodeGroup(records.slice(1))]);
}

function expectSameAsSchema(raw: Record<string, unknown>): void {
  const scan = scanJournal(journalOf(raw), FILE);
  const parsed = StoreRecord.safeParse(JSON.parse(JSON.stringify(raw)));
  if (!parsed.success) {
    assert.ok(scan.damage, `accepted what the schema rejects: ${JSON.stringify(raw)}`);
    return;
  }
  assert.equal(scan.damage, undefined, JSON.stringify(raw));
  const read = scan.log.records()[1];
  assert.deepEqual(read, { ...parsed.data, seq: 2 });
  assert.equal(JSON.stringify(read), JSON.stringify({ ...parsed.data, seq: 2 }), 'fields in the schema order');
}

/** Whether the line of `raw` was read by the byte reader (not left to JSON.parse and the schema). */
function byteRead(raw: Record<string, unknown>): boolean {
  const bytes = journalOf(raw);
  const start = bytes.indexOf(10) + 1;
  return readFrame(bytes, start, bytes.indexOf(10, start))?.checked === true;
}

const hash = (c: string) => c.repeat(64);
const patch = {
  patchId: 'p-1',
  runId: 'r',
  stepId: 3,
  toolCallId: 'tu-1',
  path: 'src/index.ts',
  op: 'modify',
  beforeHash: hash('b'),
  afterHash: hash('c'),
  beforeBlob: hash('b'),
  afterBlob: hash('c'),
  diff: '--- a\n+++ b\n@@ -1 +1 @@\n-"old" \\ x\n+\tnew ✓ \u0001\n',
  added: 1,
  removed: 1,
  binary: false,
  createdAt: 1_700_000_000_123,
  state: 'pending',
};
const valid = { v: 1, at: 1_700_000_000_200, type: 'patch', patch };

describe('patch records read from their bytes', () => {
  it('read back exactly as the schema outputs them, with and without every optional field, by the byte reader', () => {
    const { beforeBlob: _b, afterBlob: _a, ...bare } = patch;
    const variants = [
      valid,
      { ...valid, patch: bare },
      { ...valid, patch: { ...patch, op: 'create', beforeHash: 'absent', contentOmitted: true, wroteDirtyBuffer: false } },
      { ...valid, patch: { ...patch, diff: '', binary: true, toolCallId: '', beforeBlob: '', state: 'rolled_back', createdAt: 0.5 } },
      // Blob names of a hash's length that are not that hash, and a blob named where the hash is absent.
      { ...valid, patch: { ...patch, beforeBlob: hash('c'), afterBlob: `${hash('c').slice(0, 63)}d` } },
      { ...valid, patch: { ...patch, beforeHash: 'absent', beforeBlob: 'absent' } },
    ];
    for (const raw of variants) {
      expectSameAsSchema(raw);
      // As the writer writes it: stamped through the schema, so in the schema's order.
      const asWritten = StoreRecord.parse(raw) as Record<string, unknown>;
      assert.ok(byteRead(asWritten), `left to the schema: ${JSON.stringify(asWritten)}`);
    }
  });

  it('what the byte reader is not sure of goes to the schema, which reads it the same', () => {
    for (const raw of [
      { ...valid, patch: { ...patch, path: 'src/ünï.ts' } },
      { ...valid, patch: { ...patch, patchId: 'p "1"' } },
      { ...valid, patch: { ...patch, createdAt: -5 } },
      { ...valid, patch: { ...patch, stepId: 2 ** 52 } },
      { ...valid, extra: 'dropped by the schema' },
      { ...valid, patch: { ...patch, extra: 'dropped by the schema' } },
    ]) {
      expectSameAsSchema(raw);
      assert.equal(byteRead(raw), false, JSON.stringify(raw));
    }
  });

  it('fields the schema rejects are damage, never a record', () => {
    for (const bad of [
      { patchId: '' },
      { runId: '' },
      { path: '' },
      { stepId: -1 },
      { stepId: 1.5 },
      { op: 'rename' },
      { state: 'done' },
      { beforeHash: 'B'.repeat(64) },
      { afterHash: 'c'.repeat(63) },
      { added: -1 },
      { removed: '1' },
      { binary: 'false' },
      { contentOmitted: 1 },
      { wroteDirtyBuffer: null },
      { diff: 7 },
      { createdAt: '1' },
      { beforeBlob: 5 },
    ]) {
      expectSameAsSchema({ ...valid, patch: { ...patch, ...bad } });
    }
  });

  it('agrees with JSON.parse and the schema on generated patches', () => {
    const num = fc.oneof(fc.integer({ min: -3, max: 2 ** 53 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant('1'));
    const str = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('', 'absent', hash('a'), 'pending', 'modify', 'a"b\\c\n'),
    );
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
    const bool = fc.oneof(fc.boolean(), fc.constant('true'));
    const patches = fc.record({
      patchId: str,
      runId: str,
      stepId: num,
      toolCallId: str,
      path: str,
      op: fc.oneof(str, fc.constantFrom('create', 'delete')),
      beforeHash: str,
      afterHash: fc.oneof(str, fc.constant(hash('f'))),
      beforeBlob: maybe(str),
      afterBlob: maybe(str),
      diff: str,
      added: num,
      removed: num,
      binary: bool,
      contentOmitted: maybe(bool),
      wroteDirtyBuffer: maybe(bool),
      createdAt: num,
      state: fc.oneof(str, fc.constant('accepted')),
    });
    fc.assert(
      fc.property(patches, (generated) => expectSameAsSchema({ ...valid, patch: generated })),
      { numRuns: 400 },
    );
  });
});
