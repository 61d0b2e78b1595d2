import { strict as assert } from 'node:assert';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { readRunFacts } from '../../../src/core/store/facts-log';
import { openFileStore } from '../../../src/host/node/store-factory';
import { pendingPatch, runInput } from './fixtures';

const patch = pendingPatch;

/** Counts reads of refs.json. */
class RefsReadsFs extends NodeStoreFs {
  refsReads = 0;
  override readFile(path: string): Promise<Uint8Array> {
    if (path.endsWith('refs.json')) this.refsReads++;
    return super.readFile(path);
  }
}

const policy = { maxRuns: 100, maxBytes: 1 << 30 };

describe('the run facts (pending.json, refs.json): listing counts, GC blob references', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'store-facts-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const statePath = () => join(root, 'runs', 'r1', 'state.json');
  const pendingPath = () => join(root, 'runs', 'r1', 'pending.json');
  const refsPath = () => join(root, 'runs', 'r1', 'refs.json');

  it('state.json carries counts only, never id lists; the ids are in pending.json', async () => {
    const store = openFileStore(root, { timers: undefined });
    const writer = await store.createRun(runInput('r1'));
    await writer.append([patch('p1'), patch('p2')]);
    await writer.close();
    const state = JSON.parse(readFileSync(statePath(), 'utf8')) as Record<string, unknown>;
    assert.equal(state['pendingPatches'], 2);
    assert.ok(
      Object.values(state).every((value) => !Array.isArray(value)),
      'no list in state.json',
    );
    assert.equal((JSON.parse(readFileSync(pendingPath(), 'utf8')) as { pending: string }).pending, 'p1\np2');
  });

  it('a state.json of an older store (the id array) still lists, and a writer goes on from it', async () => {
    const store = openFileStore(root, { timers: undefined });
    const writer = await store.createRun(runInput('r1'));
    await writer.append([patch('p1'), patch('p2')]);
    await writer.close();
    const state = JSON.parse(readFileSync(statePath(), 'utf8')) as Record<string, unknown>;
    writeFileSync(statePath(), JSON.stringify({ ...state, pendingPatches: ['p1', 'p2'] }));
    unlinkSync(pendingPath());
    assert.equal((await store.listRuns())[0]!.pendingPatches, 2);
    const again = await store.openWriter('r1');
    await again.append([patch('p3')]);
    await again.close();
    assert.equal((await store.listRuns())[0]!.pendingPatches, 3);
    assert.equal((JSON.parse(readFileSync(statePath(), 'utf8')) as Record<string, unknown>)['pendingPatches'], 3);
  });

  it('decisions move pending.json exactly (an accept twice counts once, a rollback), as a whole read finds', async () => {
    const store = openFileStore(root, { timers: undefined });
    const writer = await store.createRun(runInput('r1'));
    await writer.append([patch('p1'), patch('p2'), patch('p3')]);
    await writer.close();
    const accept = (patchId: string) => ({ type: 'patch_state' as const, patchId, state: 'accepted' as const, reason: 'kept' });
    await store.appendDecisions('r1', [accept('p2')]);
    await store.appendDecisions('r1', [{ type: 'review', decision: 'keep', hunks: [{ patchId: 'p2', hunk: 0 }] }, accept('p2')]);
    assert.equal((await store.listRuns())[0]!.pendingPatches, 2, 'the second accept of p2 moves nothing');
    await store.appendDecisions('r1', [{ type: 'patch_state', patchId: 'p1', state: 'rolled_back', reason: 'undone' }]);
    assert.equal((await store.listRuns())[0]!.pendingPatches, 1);
    assert.equal(readFileSync(pendingPath(), 'utf8').trimEnd().split('\n').length, 4, 'the first line, then a line a decision');
    assert.deepEqual([...(await readRunFacts(store, 'r1', undefined, ['pending']))!.pending], ['p3']);
    const whole = await store.readRun('r1');
    assert.deepEqual(
      whole.patches.filter((p) => p.state === 'pending').map((p) => p.patchId),
      ['p3'],
    );
    await store.appendDecisions('r1', [accept('p3')]);
    assert.equal((await store.listRuns())[0]!.pendingPatches, 0);
    await (await store.openWriter('r1')).close();
    assert.equal((await store.listRuns())[0]!.pendingPatches, 0, 'a writer opened after agrees');
  });

  it('GC keeps a blob named only by a record appended after the last refs.json (the journal after it is folded in)', async () => {
    const store = openFileStore(root, { timers: undefined, blobGraceMs: 0 });
    const writer = await store.createRun(runInput('r1'));
    await writer.append([patch('p1')]);
    await writer.close();
    const older = join(root, 'older-refs.json');
    copyFileSync(refsPath(), older);
    const blob = await store.putBlob(new TextEncoder().encode('named later'));
    const gone = await store.putBlob(new TextEncoder().encode('named by nothing'));
    const again = await store.openWriter('r1');
    await again.append([patch('p2', blob)]);
    await again.close();
    copyFileSync(older, refsPath()); // as a writer killed before it wrote refs.json leaves it
    await store.appendDecisions('r1', [{ type: 'review', decision: 'keep', hunks: [{ patchId: 'p2', hunk: 0 }] }]);
    const result = await store.collectGarbage(policy);
    assert.equal(result.removedBlobs, 1);
    assert.ok(await store.getBlob(blob), 'the blob the later record names survives');
    await assert.rejects(store.getBlob(gone));
  });

  it('a resume from a snapshot does not read refs.json; the writer merges it before it writes it again, and GC keeps both blobs', async () => {
    const fs = new RefsReadsFs();
    const store = openFileStore(root, { fs, timers: undefined, blobGraceMs: 0, snapshotStepBytes: 1 });
    const first = await store.putBlob(new TextEncoder().encode('named first'));
    const writer = await store.createRun(runInput('r1'));
    await writer.append([patch('p1', first)]);
    await writer.close();
    const refsBefore = readFileSync(refsPath(), 'utf8');
    writeFileSync(refsPath(), '{"not": "a refs file"'); // read now, the writer would not open, or would lose p1's blob
    const second = await store.putBlob(new TextEncoder().encode('named second'));
    fs.refsReads = 0;
    const again = await store.openWriter('r1');
    assert.equal(fs.refsReads, 0, 'the resume read no refs.json');
    writeFileSync(refsPath(), refsBefore); // as it was: what the writer reads when it first writes it
    await again.append([patch('p2', second)]);
    await again.close();
    const refs = JSON.parse(readFileSync(refsPath(), 'utf8')) as { blobs: string[] };
    assert.deepEqual([...refs.blobs].sort(), [first, second].sort(), 'refs.json holds the blobs named before and by the writer');
    assert.equal((await store.collectGarbage(policy)).removedBlobs, 0);
    assert.ok(await store.getBlob(first));
  });

  it('GC: a run whose refs.json is gone is rebuilt from its journal when no writer holds it; while one does, no blob is removed', async () => {
    const store = openFileStore(root, { timers: undefined, blobGraceMs: 0 });
    const blob = await store.putBlob(new TextEncoder().encode('named'));
    const unnamed = await store.putBlob(new TextEncoder().encode('unnamed'));
    const writer = await store.createRun(runInput('r1'));
    await writer.append([patch('p1', blob)]);
    unlinkSync(refsPath());
    assert.equal((await store.collectGarbage(policy)).removedBlobs, 0, 'held, facts unknown: nothing removed');
    assert.ok(await store.getBlob(unnamed));
    await writer.close();
    unlinkSync(refsPath());
    assert.equal((await store.collectGarbage(policy)).removedBlobs, 1);
    assert.ok(await store.getBlob(blob));
    assert.ok(existsSync(refsPath()), 'the cache is written again');
  });
});
