import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError } from '../../../src/core/store/contract';
import { encodeGroup } from '../../../src/core/store/journal-format';
import type { StoredRecord } from '../../../src/core/store/records';
import { openFileStore } from '../../../src/host/node/store-factory';
import { checkpoint, ledgerEntry, message, runInput } from './fixtures';

/** A journal written as the writer frames it, from raw records (checksums valid, schemas not checked). */
function writeRawJournal(root: string, runId: string, raws: Record<string, unknown>[]): string {
  const dir = join(root, 'runs', runId);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'journal.jsonl');
  writeFileSync(file, Buffer.concat(raws.map((raw, i) => encodeGroup([{ v: 1, at: 5, ...raw, seq: i + 1 } as unknown as StoredRecord]))));
  return file;
}

const lineOffset = (bytes: Buffer, line: number) => [...bytes.entries()].filter(([, b]) => b === 0x0a).map(([i]) => i + 1)[line - 1] ?? 0;

describe('journal records read lazily', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-lazy-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('messages and ledger entries read back equal to what was appended, as plain records', async () => {
    const store = openFileStore(root);
    const writer = await store.createRun(runInput('r1'));
    const appended = await writer.append([
      message(0, 1, 'user', 'héllo ✓ "quoted" \\ back'),
      ledgerEntry('k1', 1, 'planned'),
      checkpoint('c1', 1, 'after_model', 1),
    ]);
    const later = await writer.append([ledgerEntry('k1', 1, 'succeeded')]);
    await writer.close();
    const records = await store.readRecords('r1');
    assert.deepEqual(records.slice(1), [...appended, ...later]);
    assert.deepEqual(JSON.parse(JSON.stringify(records[1])), JSON.parse(JSON.stringify(appended[0])));
    assert.deepEqual({ ...records[2]! }, { ...appended[1]! });
    const state = await store.readRun('r1');
    assert.equal(state.ledger.length, 1);
    assert.equal(state.ledger[0]!.status, 'succeeded');
    assert.deepEqual(state.messages, [{ role: 'user', content: [{ type: 'text', text: 'héllo ✓ "quoted" \\ back' }] }]);
    assert.equal(state.messages, state.messages, 'decoded once and kept');
  });

  it('a message that fails its schema opens, and throws a damaged StoreError naming file and offset when read', async () => {
    const file = writeRawJournal(root, 'r2', [
      { ...runInput('r2'), type: 'run' },
      { type: 'message', index: 0, stepId: 1, message: { role: 'robot', content: 'beep' } },
    ]);
    const store = openFileStore(root);
    const state = await store.readRun('r2');
    assert.equal(state.stepId, 1);
    const expectedOffset = lineOffset(readFileSync(file), 1);
    assert.throws(
      () => state.messages,
      (error: unknown) =>
        error instanceof StoreError &&
        error.code === 'damaged' &&
        error.file === file.replace(/\\/g, '/') &&
        error.offset === expectedOffset &&
        /byte \d+/.test(error.message),
    );
    const report = await store.verify('r2');
    assert.equal(report.ok, false);
    assert.equal(report.damage?.offset, expectedOffset);
  });

  it('a ledger entry that fails its schema is reported by verify; the current entry fails readRun clearly', async () => {
    writeRawJournal(root, 'r3', [
      { ...runInput('r3'), type: 'run' },
      { type: 'ledger', entry: { callId: 'k1', stepId: 1, status: 'nonsense' } },
    ]);
    const store = openFileStore(root);
    await assert.rejects(
      store.readRun('r3'),
      (error: unknown) => error instanceof StoreError && error.code === 'damaged' && error.offset !== undefined,
    );
    const report = await store.verify('r3');
    assert.equal(report.ok, false);
    assert.match(report.damage?.message ?? '', /ledger entry of record 2/);
  });

  it('a checkpoint that fails its schema opens; reading it throws a damaged StoreError naming file and offset, and verify reports it', async () => {
    const budget = { turns: 1, maxTurns: 5, inputTokens: 0, outputTokens: 0, tokensUsed: 0, costUsd: 0 };
    const good = (id: string, stepId: number) => ({
      type: 'checkpoint',
      checkpointId: id,
      stepId,
      label: 'after_model',
      messageCount: 0,
      patchCount: 0,
      status: 'paused',
      budget,
      stopReason: 'end_turn',
    });
    const file = writeRawJournal(root, 'r5', [
      { ...runInput('r5'), type: 'run' },
      good('c1', 1),
      { ...good('c2', 2), label: 'bogus' },
      good('c3', 3),
    ]);
    const store = openFileStore(root);
    const state = await store.readRun('r5');
    assert.equal(state.stepId, 3);
    assert.equal(state.status, 'paused');
    assert.equal(state.checkpointCount, 3);
    assert.equal(state.latestCheckpoint?.checkpointId, 'c3');
    assert.equal(state.lastStopReason, 'end_turn');
    const expectedOffset = lineOffset(readFileSync(file), 2);
    const namesLine = (error: unknown) =>
      error instanceof StoreError && error.code === 'damaged' && error.file === file.replace(/\\/g, '/') && error.offset === expectedOffset;
    assert.throws(() => state.checkpoints, namesLine);
    assert.throws(() => state.allCheckpoints, namesLine);
    const report = await store.verify('r5');
    assert.equal(report.ok, false);
    assert.equal(report.damage?.offset, expectedOffset);
    assert.equal(report.records, 2, 'verify counts the records before the damage');
  });

  it('a latest checkpoint that fails its schema fails readRun clearly: status and budget come from it', async () => {
    writeRawJournal(root, 'r6', [
      { ...runInput('r6'), type: 'run' },
      {
        type: 'checkpoint',
        checkpointId: 'c1',
        stepId: 1,
        label: 'before_model',
        messageCount: 0,
        patchCount: 0,
        status: 'asleep',
        budget: {},
      },
    ]);
    const store = openFileStore(root);
    await assert.rejects(
      store.readRun('r6'),
      (error: unknown) =>
        error instanceof StoreError &&
        error.code === 'damaged' &&
        error.offset !== undefined &&
        /does not match its schema/.test(error.message),
    );
  });

  it('a flipped byte inside a message is caught by its checksum when the run is opened, before any message is read', async () => {
    const store = openFileStore(root);
    const writer = await store.createRun(runInput('r4'));
    await writer.append([message(0, 1, 'assistant', 'a long enough message body')]);
    await writer.append([checkpoint('c1', 1, 'after_model', 1)]);
    await writer.close();
    const file = store.journalPath('r4');
    const bytes = readFileSync(file);
    const at = bytes.indexOf('long enough');
    bytes[at] = bytes[at]! ^ 0x01;
    writeFileSync(file, bytes);
    await assert.rejects(
      store.readRun('r4'),
      (error: unknown) => error instanceof StoreError && error.code === 'damaged' && error.offset === lineOffset(bytes, 1),
    );
  });
});
