import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError, type RunWriter } from '../../../src/core/store/contract';
import type { FileCheckpointStore } from '../../../src/core/store/file/file-store';
import { foldRecords } from '../../../src/core/store/history';
import type { NewRecord } from '../../../src/core/store/records';
import { pathsTo, refsAt } from '../../../src/core/store/refs';
import { decodeSnapshot, encodeSnapshot, ResumeState, type Snapshot } from '../../../src/core/store/resume-state';
import { BlobRef } from '../../../src/core/patches/schema';
import type { LineRef } from '../../../src/core/store/journal-format';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import { bytesOf, checkpoint, leaseOf, ledgerEntry, message, runInput } from './fixtures';

/** The Node port, remembering from where each read of the journal started. */
class ReadsFs extends NodeStoreFs {
  readonly journalReads: number[] = [];
  override async readFile(path: string): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.journalReads.push(0);
    return super.readFile(path);
  }
  override async readFrom(path: string, offset: number): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.journalReads.push(offset);
    return super.readFrom(path, offset);
  }
}

const compaction = (stepId: number): NewRecord => ({
  type: 'compaction',
  stepId,
  kind: 'summary',
  tokensBefore: 900,
  tokensAfter: 100,
  contextBudget: 1000,
  messagesBefore: 2,
  messagesAfter: 1,
  clearedCallIds: [],
});

/** Step n: an answer calling a tool, its ledger entries, its result. */
async function stepOf(writer: RunWriter, n: number, base: number): Promise<number> {
  await writer.append([
    message(base, n, 'assistant', `answer ${n}`),
    ledgerEntry(`k${n}`, n, 'planned'),
    checkpoint(`a${n}`, n, 'after_model', base + 1),
  ]);
  await writer.append([
    ledgerEntry(`k${n}`, n, 'succeeded'),
    message(base + 1, n, 'user', `result ${n}`),
    checkpoint(`b${n}`, n, 'before_model', base + 2),
  ]);
  return base + 2;
}

/** Six steps, compacted after the second and the fourth (a snapshot each), then two more steps. */
async function compactedRun(store: FileCheckpointStore): Promise<void> {
  const writer = await store.createRun(runInput('r1'));
  let base = 0;
  for (let n = 1; n <= 6; n++) {
    base = await stepOf(writer, n, base);
    if (n === 2 || n === 4) {
      await writer.append([compaction(n), message(0, n, 'user', `summary ${n}`), checkpoint(`s${n}`, n, 'compacted', 1)]);
      base = 1;
    }
  }
  await writer.close();
}

/** Where a resume from `snapshot` starts reading the journal: the first message line it names, else the last line it covers. */
const readsFrom = ({ lastLineStart, state }: Snapshot) =>
  Math.min(lastLineStart, ...[...state.messages, ...state.ledger].flatMap((item) => ('line' in item ? [item.line.start] : [])));

const snapshotsOf = (store: FileCheckpointStore) =>
  readdirSync(store.runDir('r1'))
    .filter((name) => name.startsWith('snapshot-'))
    .sort();

describe('state snapshots', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-snap-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** The resume state a whole replay gives: the truth every snapshot path must match. */
  async function replayed(store: FileCheckpointStore) {
    for (const name of snapshotsOf(store)) rmSync(join(store.runDir('r1'), name));
    return store.readResumeState('r1');
  }

  it('a compaction writes a snapshot naming the journal offset, last line and checksum it covers', async () => {
    const store = openFileStore(root);
    await compactedRun(store);
    const names = snapshotsOf(store);
    assert.equal(names.length, 2, 'one per compaction, the newest two kept');
    const snapshot = (await decodeSnapshot(readFileSync(join(store.runDir('r1'), names[1]!))))!;
    const journal = readFileSync(store.journalPath('r1'));
    const line = journal.subarray(snapshot.lastLineStart, snapshot.journalBytes).toString('utf8');
    assert.match(line, new RegExp(`^\\{"s":${snapshot.state.lastSeq},.*"c":"${snapshot.lastLineCrc}"\\}\\n$`));
    assert.equal(snapshot.state.latestCheckpoint?.checkpointId, 's4');
    // The summary is named by its line, not copied.
    const [summary] = snapshot.state.messages;
    assert.ok(summary && 'line' in summary && snapshot.state.messages.length === 1);
    const summaryLine = journal.subarray(summary.line.start, summary.line.end).toString('utf8');
    assert.match(summaryLine, new RegExp(`^\\{"s":${summary.line.seq},.*"type":"message".*summary 4.*"c":"${summary.line.crc}"\\}\\n$`));
  });

  it('resume reads the newest snapshot and only the journal after it, and gets what a whole replay gets', async () => {
    const fs = new ReadsFs();
    const store = openFileStore(root, { fs });
    await compactedRun(store);
    const snapshot = (await decodeSnapshot(readFileSync(join(store.runDir('r1'), snapshotsOf(store)[1]!))))!;
    const writer = await openFileStore(root, { fs }).openWriter('r1');
    await writer.close();
    assert.deepEqual(fs.journalReads.slice(-1), [readsFrom(snapshot)], 'the journal read from the first line the snapshot names on');
    assert.ok(readsFrom(snapshot) > 0 && readsFrom(snapshot) < snapshot.lastLineStart);
    const fromSnapshot = await openFileStore(root).readResumeState('r1');
    assert.deepEqual(fromSnapshot, await replayed(openFileStore(root)));
    assert.deepEqual(
      fromSnapshot.messages.map((m) => (m.content as { text: string }[])[0]!.text),
      ['summary 4', 'answer 5', 'result 5', 'answer 6', 'result 6'],
    );
  });

  it('a damaged newest snapshot falls back to the older one; both damaged, to the whole journal: the same state each time', async () => {
    const store = openFileStore(root);
    await compactedRun(store);
    const [older, newest] = snapshotsOf(store).map((name) => join(store.runDir('r1'), name));
    const flip = (path: string) => {
      const bytes = readFileSync(path);
      const at = Math.floor(bytes.length / 2);
      bytes[at] = bytes[at]! ^ 0x04;
      writeFileSync(path, bytes);
    };
    const truth = foldRecords(await store.readRecords('r1'));
    flip(newest!);
    const fromOlder = await openFileStore(root).readResumeState('r1');
    assert.deepEqual(fromOlder.messages, truth.messages);
    assert.equal(fromOlder.lastSeq, truth.lastSeq);
    flip(older!);
    const fromJournal = await openFileStore(root).readResumeState('r1');
    assert.deepEqual(fromJournal, fromOlder);
  });

  it('a snapshot is checked field by field with the event loop let run between, and one field that does not hold makes it not hold', async () => {
    const store = openFileStore(root);
    await compactedRun(store);
    const bytes = readFileSync(join(store.runDir('r1'), snapshotsOf(store).at(-1)!));
    let pauses = 0;
    const decoded = await decodeSnapshot(bytes, async () => void pauses++);
    assert.ok(decoded && decoded.state.messages.length > 0);
    assert.ok(pauses >= 10, `the loop ran between the state's fields (${pauses} pauses)`);
    assert.deepEqual(decoded, await decodeSnapshot(bytes), 'the same snapshot as read at once');
    const badBudget = { ...decoded, state: { ...decoded.state, budget: { ...decoded.state.budget, turns: -1 } } };
    assert.equal(await decodeSnapshot(encodeSnapshot(badBudget)), null);
    const withoutRun: Record<string, unknown> = { ...decoded.state };
    delete withoutRun['run'];
    assert.equal(await decodeSnapshot(encodeSnapshot({ ...decoded, state: withoutRun as typeof decoded.state })), null);
  });

  it('a snapshot the journal does not match (another journal, or one cut shorter) is not used', async () => {
    const store = openFileStore(root);
    await compactedRun(store);
    const truth = await openFileStore(root).readResumeState('r1');
    const dir = store.runDir('r1');
    for (const name of snapshotsOf(store)) {
      const snapshot = (await decodeSnapshot(readFileSync(join(dir, name))))!;
      // The same file, stating another checksum for the line it covers.
      const lied = { ...snapshot, lastLineCrc: snapshot.lastLineCrc === '00000000' ? '00000001' : '00000000' };
      writeFileSync(join(dir, name), encodeSnapshot(lied));
    }
    const fs = new ReadsFs();
    assert.deepEqual(await openFileStore(root, { fs }).readResumeState('r1'), truth);
    assert.equal(fs.journalReads.at(-1), 0, 'the whole journal was read');
  });

  it('damage in the journal after the snapshot refuses the writer, naming file and byte, and changes nothing', async () => {
    const store = openFileStore(root);
    await compactedRun(store);
    const journal = store.journalPath('r1');
    const bytes = readFileSync(journal);
    const at = bytes.lastIndexOf('result 6');
    bytes[at] = bytes[at]! ^ 0x01;
    writeFileSync(journal, bytes);
    const lineStart = bytes.lastIndexOf(0x0a, at) + 1;
    await assert.rejects(
      openFileStore(root).openWriter('r1'),
      (e: unknown) => e instanceof StoreError && e.code === 'damaged' && e.offset === lineStart && e.file === journal,
    );
    assert.deepEqual(readFileSync(journal), bytes);
    assert.equal(leaseOf(store, 'r1'), null);
  });

  it('damage before the snapshot, once a whole read found it, refuses writers too', async () => {
    const store = openFileStore(root);
    await compactedRun(store);
    const journal = store.journalPath('r1');
    const bytes = readFileSync(journal);
    const at = bytes.indexOf('answer 1');
    bytes[at] = bytes[at]! ^ 0x01;
    writeFileSync(journal, bytes);
    assert.equal((await openFileStore(root).verify('r1')).ok, false);
    await assert.rejects(
      openFileStore(root).openWriter('r1'),
      (e: unknown) => e instanceof StoreError && e.code === 'damaged' && e.offset === bytes.lastIndexOf(0x0a, at) + 1,
    );
  });

  it('a branch in the journal after the snapshot: resume folds the whole journal (a branch needs what came before)', async () => {
    const store = openFileStore(root);
    await compactedRun(store);
    const writer = await store.openWriter('r1');
    await writer.append([{ type: 'branch', checkpointId: 'a3', branchId: 'b' }]);
    await writer.close();
    const state = await openFileStore(root).readResumeState('r1');
    assert.deepEqual(
      state.messages.map((m) => (m.content as { text: string }[])[0]!.text),
      ['summary 2', 'answer 3'],
    );
    assert.equal(state.latestCheckpoint?.checkpointId, 'a3');
  });

  it('gc keeps every blob a resume from the snapshots needs: the journal names each of them', async () => {
    const store = openFileStore(root, { blobGraceMs: 0 });
    const writer = await store.createRun(runInput('r1'));
    const result = await store.putBlob(bytesOf('a result the resume needs'));
    const gone = await store.putBlob(bytesOf('named by nothing'));
    await writer.append([message(0, 1, 'user', 'go'), ledgerEntry('k1', 1, 'started', result), checkpoint('a1', 1, 'tool_started', 1)]);
    await writer.append([compaction(1), message(0, 1, 'user', 'summary 1'), checkpoint('s1', 1, 'compacted', 1)]);
    await writer.close();
    const resumed = await openFileStore(root).readResumeState('r1');
    assert.deepEqual(refsAt(resumed, pathsTo(ResumeState, BlobRef)), [result], "the state a resume reads names the open call's result");
    assert.equal((await store.collectGarbage({ maxBytes: 10_000_000 })).removedBlobs, 1);
    await assert.rejects(store.getBlob(gone), (e: unknown) => e instanceof StoreError && e.code === 'not_found');
    assert.equal(new TextDecoder().decode(await store.getBlob(result)), 'a result the resume needs');
    assert.ok(await openFileStore(root).readResumeState('r1'), 'the run still resumes from its snapshot');
  });

  it('a snapshot every few MiB of journal, without compactions', async () => {
    const store = openFileStore(root, { snapshotStepBytes: 2048 });
    const writer = await store.createRun(runInput('r1'));
    let base = 0;
    for (let n = 1; n <= 12; n++) base = await stepOf(writer, n, base);
    await writer.close();
    const names = snapshotsOf(store);
    assert.equal(names.length, 2);
    const newest = (await decodeSnapshot(readFileSync(join(store.runDir('r1'), names[1]!))))!;
    const journalBytes = readFileSync(store.journalPath('r1')).length;
    assert.ok(journalBytes - newest.journalBytes < 2048 + 1024, 'the journal after the newest snapshot is about one step of bytes');
    assert.deepEqual(await openFileStore(root).readResumeState('r1'), await replayed(openFileStore(root)));
  });

  it('a writer that closes after 64 KiB of journal since the newest snapshot writes one of where it stopped (none before it closes)', async () => {
    const fs = new ReadsFs();
    const store = openFileStore(root, { fs });
    const writer = await store.createRun(runInput('r1'));
    const big = 'x'.repeat(40_000);
    await writer.append([message(0, 1, 'user', big), checkpoint('c1', 1, 'before_model', 1)]);
    await writer.append([message(1, 1, 'assistant', big), checkpoint('c2', 1, 'after_model', 2)]);
    const crashed = await openFileStore(root).readResumeState('r1');
    assert.equal(snapshotsOf(store).length, 0, 'no snapshot before the writer closes');
    await writer.close();
    const names = snapshotsOf(store);
    assert.equal(names.length, 1);
    const snapshot = (await decodeSnapshot(readFileSync(join(store.runDir('r1'), names[0]!))))!;
    assert.equal(snapshot.journalBytes, readFileSync(store.journalPath('r1')).length, 'it covers the whole journal');
    const reader = openFileStore(root, { fs });
    await (await reader.openWriter('r1')).close();
    assert.deepEqual(fs.journalReads.slice(-1), [readsFrom(snapshot)], 'a resume reads only the lines it names');
    assert.deepEqual(await openFileStore(root).readResumeState('r1'), crashed);
    assert.equal(snapshotsOf(store).length, 1, 'a writer that appended nothing writes none');
  });

  it('a long live context: the snapshot names each message by its journal line and stays small; a resume reads them back whole', async () => {
    const store = openFileStore(root);
    const writer = await store.createRun(runInput('r1'));
    const text = (n: number) => `${n} `.repeat(10_000);
    for (let n = 0; n < 10; n++) await writer.append([message(n, n + 1, n % 2 ? 'assistant' : 'user', text(n))]);
    await writer.close();
    const [name] = snapshotsOf(store);
    const bytes = readFileSync(join(store.runDir('r1'), name!));
    const snapshot = (await decodeSnapshot(bytes))!;
    assert.equal(snapshot.state.messages.filter((m) => 'line' in m).length, 10, 'every message named by its line');
    assert.ok(bytes.length < 5_000, `the snapshot holds ${bytes.length} bytes for ${10 * 20_000} bytes of messages`);
    const fs = new ReadsFs();
    const resumed = await openFileStore(root, { fs }).readResumeState('r1');
    assert.deepEqual(fs.journalReads, [readsFrom(snapshot)], 'one read of the journal, from the first message on');
    assert.deepEqual(resumed, await replayed(openFileStore(root)));
    assert.equal((resumed.messages[3]!.content as { text: string }[])[0]!.text, text(3));
  });

  it('a message line a snapshot names that does not hold (another record, other bytes, past the end) makes it not hold: the same state from the whole journal', async () => {
    const store = openFileStore(root);
    await compactedRun(store);
    const dir = store.runDir('r1');
    const truth = await openFileStore(root).readResumeState('r1');
    const journal = readFileSync(store.journalPath('r1'));
    const checkpointLine = (() => {
      const end = journal.indexOf(0x0a, journal.indexOf('"type":"checkpoint"')) + 1;
      const start = journal.lastIndexOf(0x0a, end - 2) + 1;
      const line = JSON.parse(journal.subarray(start, end).toString('utf8')) as { s: number; c: string };
      return { start, end, crc: line.c, seq: line.s };
    })();
    const lies: Array<(line: LineRef) => LineRef> = [
      () => checkpointLine, // a whole line that holds, but not a message record
      (line) => ({ ...line, crc: line.crc === '00000000' ? '00000001' : '00000000' }),
      (line) => ({ ...line, seq: line.seq + 1 }),
      (line) => ({ ...line, start: line.start + 1 }),
      (line) => ({ ...line, start: journal.length, end: journal.length + 10 }),
    ];
    const originals = snapshotsOf(store).map((name) => [name, readFileSync(join(dir, name))] as const);
    for (const lie of lies) {
      for (const [name, bytes] of originals) {
        const snapshot = (await decodeSnapshot(bytes))!;
        const messages = snapshot.state.messages.map((m) => ('line' in m ? { line: lie(m.line) } : m));
        writeFileSync(join(dir, name), encodeSnapshot({ ...snapshot, state: { ...snapshot.state, messages } }));
      }
      const fs = new ReadsFs();
      assert.deepEqual(await openFileStore(root, { fs }).readResumeState('r1'), truth);
      assert.equal(fs.journalReads.at(-1), 0, 'the whole journal was read');
    }
  });

  it('a writer resumed from a snapshot names the messages it read (and those of the journal after it) by line in its next snapshot', async () => {
    await compactedRun(openFileStore(root));
    // A snapshot after each append from here.
    const store = openFileStore(root, { snapshotStepBytes: 0 });
    const writer = await store.openWriter('r1');
    await stepOf(writer, 7, 5);
    await writer.close();
    const newest = (await decodeSnapshot(readFileSync(join(store.runDir('r1'), snapshotsOf(store).at(-1)!))))!;
    assert.equal(newest.state.messages.length, 7);
    assert.ok(
      newest.state.messages.every((m) => 'line' in m),
      'no message copied',
    );
    assert.deepEqual(await openFileStore(root).readResumeState('r1'), await replayed(openFileStore(root)));
  });

  it("an open call's ledger entry is named by its line too; a line that is not a ledger record makes the snapshot not hold", async () => {
    const store = openFileStore(root, { snapshotStepBytes: 0 });
    const writer = await store.createRun(runInput('r1'));
    await writer.append([message(0, 1, 'user', 'go'), ledgerEntry('k1', 1, 'started'), checkpoint('a1', 1, 'tool_started', 1)]);
    await writer.close();
    const dir = store.runDir('r1');
    const truth = await replayed(openFileStore(root));
    assert.equal(truth.ledger[0]?.status, 'started');
    for (const name of snapshotsOf(store)) {
      const snapshot = (await decodeSnapshot(readFileSync(join(dir, name))))!;
      const [entry] = snapshot.state.ledger;
      const [first] = snapshot.state.messages;
      assert.ok(entry && 'line' in entry && first && 'line' in first, 'both named by line');
      assert.deepEqual(await openFileStore(root).readResumeState('r1'), truth);
      // The ledger entry named by the message's line: a line that holds, of another record type.
      writeFileSync(join(dir, name), encodeSnapshot({ ...snapshot, state: { ...snapshot.state, ledger: [{ line: first.line }] } }));
    }
    const fs = new ReadsFs();
    assert.deepEqual(await openFileStore(root, { fs }).readResumeState('r1'), truth);
    assert.equal(fs.journalReads.at(-1), 0, 'the whole journal was read');
  });

  it('after a branch (a restore) the writer reads the whole journal and still names every message and entry by its line', async () => {
    await compactedRun(openFileStore(root));
    const store = openFileStore(root, { snapshotStepBytes: 0 });
    const writer = await store.openWriter('r1');
    await writer.append([{ type: 'branch', checkpointId: 'a3', branchId: 'b' }]);
    await writer.append([message(2, 3, 'user', 'on the branch'), ledgerEntry('k9', 3, 'started'), checkpoint('c9', 3, 'tool_started', 3)]);
    await writer.close();
    const newest = (await decodeSnapshot(readFileSync(join(store.runDir('r1'), snapshotsOf(store).at(-1)!))))!;
    assert.equal(newest.state.messages.length, 3);
    assert.ok(
      [...newest.state.messages, ...newest.state.ledger].every((item) => 'line' in item),
      'nothing copied',
    );
    const resumed = await openFileStore(root).readResumeState('r1');
    assert.deepEqual(resumed, await replayed(openFileStore(root)));
    assert.deepEqual(
      resumed.messages.map((m) => (m.content as { text: string }[])[0]!.text),
      ['summary 2', 'answer 3', 'on the branch'],
    );
  });
});
