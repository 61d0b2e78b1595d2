import { strict as assert } from 'node:assert';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileCheckpointStore } from '../../../src/core/store/file/file-store';
import { readRunFacts } from '../../../src/core/store/facts-log';
import { checksummed } from '../../../src/core/store/journal-format';
import { foldRecords } from '../../../src/core/store/history';
import type { NewRecord } from '../../../src/core/store/records';
import { openFileStore } from '../../../src/host/node/store-factory';
import { pendingPatch, runInput } from './fixtures';

// pending.json and refs.json are logs: a first line with the whole set, then a line of what moved
// per write, so that what a step writes follows what it moved, not the run's length. A torn last
// line is left out, a line that does not hold makes the file not hold, an older file still reads.

const accept = (patchId: string): NewRecord => ({ type: 'patch_state', patchId, state: 'accepted', reason: 'kept' });

describe('the facts logs (pending.json, refs.json)', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'facts-log-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const open = () => openFileStore(root, { timers: undefined, snapshotStepBytes: 512 });
  const file = (store: FileCheckpointStore, name: string) => join(store.runDir('r1'), name);

  /** The pending ids the whole journal gives. */
  const wholePending = async (store: FileCheckpointStore) =>
    (await store.readRun('r1')).patches.filter((p) => p.state === 'pending').map((p) => p.patchId);

  /** A run of `count` patches, one an append, every third accepted later; the writer left open. */
  async function patches(store: FileCheckpointStore, count: number) {
    const writer = await store.createRun(runInput('r1'));
    for (let i = 0; i < count; i++) await writer.append([pendingPatch(`p${i}`), ...(i % 3 === 2 ? [accept(`p${i - 1}`)] : [])]);
    return writer;
  }

  it('a writer appends a line of what moved per write, and the log reads back as the whole journal gives', async () => {
    const store = open();
    const writer = await patches(store, 60);
    await writer.close();
    const lines = readFileSync(file(store, 'pending.json'), 'utf8').trimEnd().split('\n');
    assert.ok(lines.length > 5, `${lines.length} lines`);
    assert.ok(lines.slice(1).every((line) => line.includes('"moved":true')));
    const facts = await readRunFacts(open(), 'r1');
    assert.deepEqual([...facts!.pending].sort(), (await wholePending(store)).sort());
    assert.equal((await open().listRuns())[0]!.pendingPatches, 40);
  });

  it('what a write appends does not grow with the set: a line for a step, whatever the ids the first line holds', async () => {
    const store = open();
    const writer = await patches(store, 150);
    const sizeAt = (name: string) => statSync(file(store, name)).size;
    const before = sizeAt('pending.json');
    await writer.append([pendingPatch('q1')]);
    await writer.append([pendingPatch('q2'), pendingPatch('q3')]);
    const grew = sizeAt('pending.json') - before;
    await writer.close();
    assert.ok(grew > 0 && grew < 1024, `pending.json grew ${grew} bytes (its first line holds 100 ids, 1,200 bytes of them)`);
  });

  it('a moved line states only true moves, applied without a lookup; an older line of latest states is still checked id by id', async () => {
    const store = open();
    const writer = await patches(store, 9);
    // Pending and kept within one write: it never moved as the log sees it.
    await writer.append([pendingPatch('z'), accept('z'), accept('p0')]);
    await writer.close();
    const path = file(store, 'pending.json');
    const last = JSON.parse(readFileSync(path, 'utf8').trimEnd().split('\n').at(-1)!) as Record<string, unknown>;
    assert.equal(last['exact'], true);
    assert.equal(last['gone'], 'p0', 'z moved in and out again: not in the line');
    // A line an older writer appended: its moves are each id's latest state, true or not.
    const { c: _c, exact: _exact, ...point } = last;
    appendFileSync(path, checksummed(JSON.stringify({ ...point, pending: 'p2\nnew', gone: 'never\nnever2\np0' }).slice(0, -1)));
    const read = await readRunFacts(open(), 'r1');
    const expected = [...(await wholePending(store)), 'new'].sort();
    assert.equal(read!.pending.size, expected.length, 'an id already pending, or never pending, does not move the count');
    assert.deepEqual([...read!.pending].sort(), expected);
  });

  it('a torn last line (an append cut short) is left out: the journal after the line before it is folded in', async () => {
    const store = open();
    const writer = await patches(store, 30);
    await writer.close();
    const path = file(store, 'pending.json');
    const whole = readFileSync(path, 'utf8');
    appendFileSync(path, whole.trimEnd().split('\n').at(-1)!.slice(0, 40));
    assert.deepEqual([...(await readRunFacts(open(), 'r1', undefined, ['pending']))!.pending].sort(), (await wholePending(store)).sort());
    const next = await open().openWriter('r1');
    await next.append([pendingPatch('late')]);
    await next.close();
    const lines = readFileSync(path, 'utf8').split('\n');
    assert.equal(lines.at(-1), '', 'the next writer started the log again, whole lines only');
    assert.deepEqual([...(await readRunFacts(open(), 'r1', undefined, ['pending']))!.pending].sort(), (await wholePending(store)).sort());
  });

  it('a complete line that does not hold makes the log not hold: the facts come from the whole journal', async () => {
    const store = open();
    const writer = await patches(store, 30);
    await writer.close();
    const path = file(store, 'pending.json');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"moved":true', '"moved":true ');
    writeFileSync(path, lines.join('\n'));
    assert.equal(await readRunFacts(open(), 'r1', undefined, ['pending']), null);
    const next = await open().openWriter('r1');
    await next.close();
    assert.equal((await open().listRuns())[0]!.pendingPatches, (await wholePending(store)).length);
  });

  it('an older store: pending.json and refs.json as one JSON object without a checksum still read, and are written as logs next', async () => {
    const store = open();
    const writer = await patches(store, 12);
    await writer.close();
    const records = await store.readRecords('r1');
    const fold = foldRecords(records);
    const journal = readFileSync(store.journalPath('r1'));
    const lastLineStart = journal.lastIndexOf(0x0a, journal.length - 2) + 1;
    const point = {
      v: 1,
      runId: 'r1',
      journalBytes: journal.length,
      lastLineStart,
      lastLineCrc: journal.subarray(journal.length - 11, journal.length - 3).toString('utf8'),
      lastSeq: records.at(-1)!.seq,
    };
    const pending = fold.patches.filter((p) => p.state === 'pending').map((p) => p.patchId);
    writeFileSync(file(store, 'pending.json'), JSON.stringify({ ...point, pending: pending.join('\n'), pendingCount: pending.length }));
    writeFileSync(file(store, 'refs.json'), JSON.stringify({ ...point, blobs: [], runs: [] }));
    const read = await readRunFacts(open(), 'r1');
    assert.deepEqual([...read!.pending].sort(), [...pending].sort());
    const next = await open().openWriter('r1');
    await next.append([pendingPatch('new')]);
    await next.close();
    assert.match(readFileSync(file(store, 'pending.json'), 'utf8'), /^\{.*,"c":"[0-9a-f]{8}"\}\n/);
    assert.deepEqual([...(await readRunFacts(open(), 'r1'))!.pending].sort(), [...pending, 'new'].sort());
  });
});
