import { normalize } from 'node:path';
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError } from '../../../src/core/store/contract';
import { encodeGroup } from '../../../src/core/store/journal-format';
import { MIGRATIONS, upgradeRecord, type MigrationTable } from '../../../src/core/store/migrations';
import { FORMAT_VERSION, type StoredRecord } from '../../../src/core/store/records';
import { openFileStore } from '../../../src/host/node/store-factory';
import { runInput } from './fixtures';

/** A pretend history for the test only: format 1 notes had `body`, format 2 renamed it `text`. */
const table: MigrationTable = new Map([
  [
    1,
    (raw: Record<string, unknown>) =>
      raw.type === 'note' && 'body' in raw ? (({ body, ...rest }) => ({ ...rest, text: body }))(raw) : raw,
  ],
]);

function writeJournal(root: string, runId: string, raws: Record<string, unknown>[]): string {
  const dir = join(root, 'runs', runId);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'journal.jsonl');
  const groups = raws.map((raw, i) => encodeGroup([{ ...raw, seq: i + 1 } as unknown as StoredRecord]));
  writeFileSync(file, Buffer.concat(groups));
  return file;
}

const runRaw = (v: number) => ({ ...runInput('old'), type: 'run', v, at: 1 });

describe('format migrations', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-mig-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('format 1 reads as format 3: a patch record loses its unified diff, the journal is not rewritten', async () => {
    assert.equal(FORMAT_VERSION, 3);
    assert.deepEqual([...MIGRATIONS.keys()], [1, 2]);
    const patch = {
      patchId: 'p1',
      runId: 'old',
      stepId: 1,
      toolCallId: 'toolu_1',
      path: 'a.txt',
      op: 'modify',
      beforeHash: 'a'.repeat(64),
      afterHash: 'b'.repeat(64),
      diff: '--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-one\n+ONE\n',
      added: 1,
      removed: 1,
      binary: false,
      createdAt: 2,
      state: 'pending',
    };
    const file = writeJournal(root, 'old', [runRaw(1), { v: 1, at: 2, type: 'patch', patch }]);
    const before = readFileSync(file);
    const state = await openFileStore(root).readRun('old');
    assert.equal(state.patches.length, 1);
    assert.equal('diff' in state.patches[0]!, false);
    assert.equal(state.patches[0]!.added, 1);
    assert.deepEqual(readFileSync(file), before);
    const records = await openFileStore(root).readRecords('old');
    assert.ok(records.every((r) => r.v === 3));
  });

  it('a journal with a format-3 record is refused by a build of format 2 as newer, not as damage', async () => {
    const store = openFileStore(root);
    const writer = await store.createRun(runInput('new'));
    await writer.append([{ type: 'restore_done', restoreId: 'r1', written: ['a.txt'], left: [] }]);
    await writer.close();
    const older = openFileStore(root, { readVersion: 2 });
    await assert.rejects(older.readRun('new'), (e: unknown) => e instanceof StoreError && e.code === 'future_version');
    assert.equal((await store.readRecords('new')).at(-1)?.type, 'restore_done');
  });

  it('upgrades a raw record one version at a time and refuses a gap', () => {
    const upgraded = upgradeRecord({ v: 1, type: 'note', kind: 'info', body: 'old words', at: 1 }, 'f', table, 2);
    assert.deepEqual(upgraded, { v: 2, type: 'note', kind: 'info', text: 'old words', at: 1 });
    assert.throws(() => upgradeRecord({ v: 1, type: 'note' }, 'f', new Map(), 2), /no migration from format 1/);
  });

  it('an older journal is read through the injected table; the file is not rewritten', async () => {
    const file = writeJournal(root, 'old', [runRaw(1), { v: 1, at: 2, type: 'note', kind: 'info', body: 'old words' }]);
    const before = readFileSync(file);
    const store = openFileStore(root, { migrations: table, readVersion: 2 });
    const state = await store.readRun('old');
    assert.equal(state.notes[0]!.text, 'old words');
    assert.equal(state.notes[0]!.v, 2);
    assert.deepEqual(readFileSync(file), before);
  });

  it('a future version is a clear error naming the file, and nothing is deleted', async () => {
    const file = writeJournal(root, 'new', [runRaw(1), { v: 99, at: 2, type: 'note', kind: 'info', text: 'from the future' }]);
    const before = readFileSync(file);
    const store = openFileStore(root);
    await assert.rejects(
      store.readRun('new'),
      // The store names its files with / (Windows opens either): the same file, whatever the slashes.
      (e: unknown) =>
        e instanceof StoreError &&
        e.code === 'future_version' &&
        normalize(e.file ?? '') === normalize(file) &&
        e.message.includes(e.file ?? '?'),
    );
    await assert.rejects(store.openWriter('new'), (e: unknown) => e instanceof StoreError && e.code === 'future_version');
    const report = await store.verify('new');
    assert.equal(report.ok, false);
    assert.match(report.damage?.message ?? '', /newer version/);
    const listed = await store.listRuns();
    assert.match(listed[0]!.damaged ?? '', /newer version/);
    const gc = await store.collectGarbage({ maxRuns: 0, maxBytes: 0 });
    assert.deepEqual(gc.removedRuns, []);
    assert.ok(existsSync(file));
    assert.deepEqual(readFileSync(file), before);
  });
});
