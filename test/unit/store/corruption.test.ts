import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError } from '../../../src/core/store/contract';
import { scanJournal, type JournalScan } from '../../../src/core/store/journal-format';
import type { StoredRecord } from '../../../src/core/store/records';
import { openFileStore } from '../../../src/host/node/store-factory';
import { checkpoint, leaseOf, ledgerEntry, message, runInput } from './fixtures';

/** A small journal: 4 commit groups, one of them 3 records long. */
async function smallJournal(root: string): Promise<{ bytes: Buffer; records: readonly StoredRecord[]; groupEnds: number[] }> {
  const store = openFileStore(root);
  const writer = await store.createRun(runInput('r1'));
  await writer.append([checkpoint('c0', 0, 'run_start', 0)]);
  await writer.append([message(0, 1, 'assistant', 'héllo ✓'), ledgerEntry('k1', 1, 'planned'), checkpoint('c1', 1, 'after_model', 1)]);
  await writer.append([ledgerEntry('k1', 1, 'succeeded')]);
  await writer.close();
  const bytes = readFileSync(store.journalPath('r1'));
  const records = await store.readRecords('r1');
  const lineEnds = [...bytes.entries()].filter(([, b]) => b === 0x0a).map(([i]) => i + 1);
  const groupEnds = [0, lineEnds[0]!, lineEnds[1]!, lineEnds[4]!, lineEnds[5]!];
  assert.equal(groupEnds[4], bytes.length);
  return { bytes, records, groupEnds };
}

type Outcome = 'clean' | 'torn' | 'damaged' | 'crash';

async function classify(bytes: Uint8Array, original: readonly StoredRecord[]): Promise<{ outcome: Outcome; scan?: JournalScan }> {
  let scan: JournalScan;
  try {
    scan = await scanJournal(bytes, { file: 'journal.jsonl' });
  } catch (error) {
    return { outcome: error instanceof StoreError ? 'damaged' : 'crash' };
  }
  const kept = scan.records;
  assert.deepEqual(kept, original.slice(0, kept.length), 'kept records are an intact prefix');
  if (scan.damage) return { outcome: 'damaged', scan };
  return { outcome: scan.tornTail ? 'torn' : 'clean', scan };
}

describe('journal corruption', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-corrupt-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('every truncation: a group boundary is a clean prefix, anything else a torn tail cut back to the last group', async () => {
    const { bytes, records, groupEnds } = await smallJournal(root);
    const counts: Record<Outcome, number> = { clean: 0, torn: 0, damaged: 0, crash: 0 };
    for (let length = 0; length < bytes.length; length++) {
      const { outcome, scan } = await classify(bytes.subarray(0, length), records);
      counts[outcome]++;
      const lastGroupEnd = Math.max(...groupEnds.filter((end) => end <= length));
      if (outcome === 'torn') assert.equal(scan!.goodLength, lastGroupEnd);
      if (outcome === 'clean') assert.ok(groupEnds.includes(length), `clean at ${length}`);
    }
    assert.deepEqual(counts, { clean: 4, torn: bytes.length - 4, damaged: 0, crash: 0 });
  });

  it('every byte flipped, the last commit group included: 100% damage at or before the flip, never cut as torn', async () => {
    const { bytes, records } = await smallJournal(root);
    const counts: Record<Outcome, number> = { clean: 0, torn: 0, damaged: 0, crash: 0 };
    for (const mask of [0x01, 0x80, 0xff]) {
      for (let at = 0; at < bytes.length; at++) {
        const flipped = Buffer.from(bytes);
        flipped[at] = flipped[at]! ^ mask;
        const { outcome, scan } = await classify(flipped, records);
        counts[outcome]++;
        if (outcome === 'damaged' && scan) assert.ok(scan.damage!.offset <= at, `damage at ${scan.damage!.offset} for a flip at ${at}`);
      }
    }
    if (process.env.STORE_COUNTS) console.log(JSON.stringify({ bytes: bytes.length, ...counts }));
    assert.deepEqual(counts, { clean: 0, torn: 0, damaged: bytes.length * 3, crash: 0 });
  });

  it('a flipped byte in the last, fsynced commit group: open refused naming file and byte, file unchanged, intact part read-only', async () => {
    const { bytes, groupEnds } = await smallJournal(root);
    const store = openFileStore(root);
    const journal = store.journalPath('r1');
    const corrupt = Buffer.from(bytes);
    const at = bytes.indexOf('succeeded', groupEnds[3]);
    corrupt[at] = corrupt[at]! ^ 0x20;
    writeFileSync(journal, corrupt);
    const named = (e: unknown) =>
      e instanceof StoreError &&
      e.code === 'damaged' &&
      e.file === journal &&
      e.offset === groupEnds[3] &&
      e.message.includes(`${journal} is damaged at byte ${groupEnds[3]}`);
    await assert.rejects(store.openWriter('r1'), named);
    assert.deepEqual(readFileSync(journal), corrupt, 'nothing was cut: the file is byte-identical');
    assert.equal(leaseOf(store, 'r1'), null, 'a refused writer leaves no lease behind');
    await assert.rejects(store.readRun('r1'), named);
    const intact = await store.readRun('r1', { intactPart: true });
    assert.deepEqual(intact.damage, { file: journal, offset: groupEnds[3], message: intact.damage?.message });
    assert.equal(intact.lastSeq, 5, 'the groups before the damaged one');
    assert.deepEqual(
      intact.ledger.map((e) => [e.callId, e.status]),
      [['k1', 'planned']],
    );
    assert.deepEqual(readFileSync(journal), corrupt);
    assert.equal((await store.verify('r1')).damage?.offset, groupEnds[3]);
  });

  it('a flipped byte in run_end: the completed run is refused, never reopened, and reads as damaged', async () => {
    const store = openFileStore(root);
    const writer = await store.createRun(runInput('r1'));
    await writer.append([checkpoint('c0', 0, 'run_start', 0)]);
    await writer.append([{ type: 'run_end', status: 'completed', summary: 'done' }]);
    await writer.close();
    const journal = store.journalPath('r1');
    const bytes = readFileSync(journal);
    const runEndAt = bytes.lastIndexOf('{"s":3');
    const corrupt = Buffer.from(bytes);
    const flip = bytes.indexOf('completed', runEndAt);
    corrupt[flip] = corrupt[flip]! ^ 0x01;
    writeFileSync(journal, corrupt);
    await assert.rejects(store.openWriter('r1'), (e: unknown) => e instanceof StoreError && e.code === 'damaged' && e.offset === runEndAt);
    assert.deepEqual(readFileSync(journal), corrupt);
    const intact = await store.readRun('r1', { intactPart: true });
    assert.equal(intact.damage?.offset, runEndAt);
    assert.equal(intact.ended, undefined);
    assert.equal((await store.listRuns())[0]?.damaged !== undefined, true, 'listed as damaged, so nothing offers to resume it');
  });

  it('a last line whose newline was changed is damage; the same line without its newline is a torn write', async () => {
    const { bytes, records, groupEnds } = await smallJournal(root);
    const changed = Buffer.from(bytes);
    changed[bytes.length - 1] = 0x20;
    assert.equal((await classify(changed, records)).scan?.damage?.offset, groupEnds[3]);
    const { outcome, scan } = await classify(bytes.subarray(0, bytes.length - 1), records);
    assert.equal(outcome, 'torn');
    assert.deepEqual(scan?.tornTail, { offset: groupEnds[3], bytes: bytes.length - 1 - groupEnds[3]! });
  });

  it('a writer cuts a torn tail on open and keeps appending; verify records the cut', async () => {
    const { bytes } = await smallJournal(root);
    const store = openFileStore(root);
    const journal = store.journalPath('r1');
    const torn = Buffer.from('{"s":7,"b":7,"e":7,"r":{"v":1,"typ');
    writeFileSync(journal, Buffer.concat([bytes, torn]));
    assert.equal((await store.readRecords('r1')).length, 6, 'a reader ignores the torn tail without touching the file');
    assert.equal(statSync(journal).size, bytes.length + torn.length);
    const writer = await store.openWriter('r1');
    assert.equal(statSync(journal).size, bytes.length);
    assert.deepEqual(writer.tornTailCut, { file: journal, offset: bytes.length, bytes: torn.length }, 'the cut is reported to the host');
    await writer.append([message(1, 2, 'user', 'after the cut')]);
    await writer.close();
    const records = await store.readRecords('r1');
    assert.deepEqual(
      records.map((r) => r.seq),
      [1, 2, 3, 4, 5, 6, 7],
    );
    const report = await store.verify('r1');
    assert.deepEqual(report.tornTail, { offset: bytes.length, bytes: torn.length });
    assert.equal(report.ok, true);
  });

  it('mid-file corruption: damaged with file and offset, listed as damaged, nothing changed', async () => {
    const { bytes, groupEnds } = await smallJournal(root);
    const store = openFileStore(root);
    const journal = store.journalPath('r1');
    const corrupt = Buffer.from(bytes);
    const at = groupEnds[1]! + 20;
    corrupt[at] = corrupt[at]! ^ 0x04;
    writeFileSync(journal, corrupt);
    await assert.rejects(
      store.readRun('r1'),
      (e: unknown) => e instanceof StoreError && e.code === 'damaged' && e.file === journal && e.offset === groupEnds[1],
    );
    await assert.rejects(store.openWriter('r1'), (e: unknown) => e instanceof StoreError && e.code === 'damaged');
    const report = await store.verify('r1');
    assert.equal(report.ok, false);
    assert.equal(report.damage?.offset, groupEnds[1]);
    const listed = await store.listRuns();
    assert.match(listed[0]!.damaged ?? '', /journal\.jsonl at byte/);
    assert.deepEqual(readFileSync(journal), corrupt, 'the damaged journal is left as it was');
    assert.equal(leaseOf(store, 'r1'), null, 'a refused writer leaves no lease behind');
  });
});
