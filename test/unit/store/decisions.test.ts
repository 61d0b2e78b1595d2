import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewRecord } from '../../../src/core/store/records';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import { pendingPatch, runInput } from './fixtures';

/** A node port that counts reads of journals (whole or from an offset). */
class CountingFs extends NodeStoreFs {
  journalReads = 0;
  override readFile(path: string): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.journalReads++;
    return super.readFile(path);
  }
  override readFrom(path: string, offset: number): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.journalReads++;
    return super.readFrom(path, offset);
  }
}

const patch = (patchId: string): NewRecord => pendingPatch(patchId);

describe('the light path of decisions (appendDecisions) and the listing facts', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'store-decisions-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  async function runWithPatches(fs: CountingFs) {
    const store = openFileStore(root, { fs, timers: undefined });
    const writer = await store.createRun(runInput('r1'));
    await writer.append([patch('p1'), patch('p2')]);
    await writer.close();
    return store;
  }

  it('appends a keep and an accept reading no journal; the listing carries the pending patches; a full read agrees', async () => {
    const fs = new CountingFs();
    const store = await runWithPatches(fs);
    assert.equal((await store.listRuns())[0]!.pendingPatches, 2);
    const reads = fs.journalReads;
    const stored = await store.appendDecisions('r1', [
      { type: 'review', decision: 'keep', hunks: [{ patchId: 'p1', hunk: 0 }] },
      { type: 'patch_state', patchId: 'p1', state: 'accepted', reason: 'every hunk kept in review' },
    ]);
    assert.equal(fs.journalReads, reads, 'no journal read');
    assert.deepEqual(
      stored.map((r) => r.seq),
      [4, 5],
    );
    const [summary] = await store.listRuns();
    assert.equal(summary!.pendingPatches, 1);
    assert.equal(summary!.leased, false, 'the lease is released');
    const state = await openFileStore(root).readRun('r1');
    assert.deepEqual(
      state.patches.filter((p) => p.state === 'pending').map((p) => p.patchId),
      ['p2'],
    );
    assert.equal(state.decisions?.get('p1')?.get(0), 'keep', 'the decisions are in the one fold');
    // A writer opened after it goes on from there (state file and journal agree).
    const writer = await store.openWriter('r1');
    assert.equal((await writer.append([patch('p3')]))[0]!.seq, 6);
    await writer.close();
    assert.equal((await store.listRuns())[0]!.pendingPatches, 2);
  });

  it('a state file behind its journal sends the decision the full way, and it still lands', async () => {
    const fs = new CountingFs();
    const store = await runWithPatches(fs);
    const writer = await store.openWriter('r1');
    await writer.append([patch('p3')]);
    await writer.close();
    // As a writer cut off before it rewrote the state file leaves it: behind the journal.
    const statePath = join(root, 'runs', 'r1', 'state.json');
    const lagging = JSON.parse(readFileSync(statePath, 'utf8')) as { journalBytes: number; lastSeq: number };
    writeFileSync(statePath, JSON.stringify({ ...lagging, journalBytes: lagging.journalBytes - 10, lastSeq: lagging.lastSeq - 1 }));
    const reads = fs.journalReads;
    await store.appendDecisions('r1', [{ type: 'patch_state', patchId: 'p3', state: 'accepted', reason: 'accepted by the user' }]);
    assert.ok(fs.journalReads > reads, 'the full path reads the journal');
    const state = await store.readRun('r1');
    assert.equal(state.patches.find((p) => p.patchId === 'p3')?.state, 'accepted');
  });

  it('refuses while a writer holds the run', async () => {
    const store = await runWithPatches(new CountingFs());
    const writer = await openFileStore(root, { timers: undefined }).openWriter('r1');
    await assert.rejects(
      store.appendDecisions('r1', [{ type: 'review', decision: 'undo', hunks: [{ patchId: 'p1', hunk: 0 }] }]),
      (error: Error & { code?: string }) => error.code === 'lease_held',
    );
    await writer.close();
  });
});

describe('garbage collection after a run', () => {
  it('reads no journal: blob references come with its facts (refs.json)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'store-gc-reads-'));
    try {
      const fs = new CountingFs();
      const store = openFileStore(root, { fs, timers: undefined, blobGraceMs: 0 });
      for (const id of ['a', 'b', 'c']) await (await store.createRun(runInput(id))).close();
      let reads = fs.journalReads;
      await store.collectGarbage({ maxRuns: 100, maxBytes: 1 << 30 });
      assert.equal(fs.journalReads - reads, 0, 'no journal read');
      const blob = await store.putBlob(new TextEncoder().encode('kept'));
      const writer = await store.openWriter('b');
      await writer.append([pendingPatch('p9', blob)]);
      await writer.close();
      reads = fs.journalReads;
      const result = await store.collectGarbage({ maxRuns: 100, maxBytes: 1 << 30 });
      assert.equal(fs.journalReads - reads, 0, 'no journal read after a run either');
      assert.equal(result.removedBlobs, 0, 'the blob its new record names is kept');
      assert.ok(await store.getBlob(blob));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
