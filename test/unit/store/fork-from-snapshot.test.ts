import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileCheckpointStore } from '../../../src/core/store/file/file-store';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import { message, runInput } from './fixtures';
import { randomOf, randomSteps, wholeFold, type Shape } from './fork-random';

// A fork opens from its parent's snapshots (fork-fold.ts, forkFromParts), never by reading the
// parent whole, and gets exactly the state the whole fold of the parent's records up to the
// point it stands on and its own records gives: random runs, random fork points.

/** The Node port, counting whole reads of each journal. */
class CountingFs extends NodeStoreFs {
  readonly wholeReads = new Map<string, number>();
  override async readFile(path: string): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.wholeReads.set(path, (this.wholeReads.get(path) ?? 0) + 1);
    return super.readFile(path);
  }
}

describe('a fork opens from its parent snapshots', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'fork-snap-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const open = (fs = new CountingFs()) => ({ fs, store: openFileStore(root, { fs, snapshotStepBytes: 1024, forkSpan: 16 }) });

  async function parentOf(store: FileCheckpointStore, seed: number, shape: Shape, steps: number): Promise<void> {
    const random = randomOf(seed);
    const writer = await store.createRun(runInput('p'));
    await writer.append([message(0, 0, 'user', 'task')]);
    await randomSteps(writer, random, steps, shape);
    await writer.close();
  }

  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`seed ${seed}: at random steps, the state the whole fold gives, without reading the parent's journal whole`, async () => {
      const random = randomOf(seed * 7919);
      await parentOf(open().store, seed, { revisions: false }, 30);
      for (let i = 0; i < 4; i++) {
        const step = 3 + random(27);
        const forkId = `f${i}`;
        await open().store.forkRun('p', { runId: forkId, step, files: random(2) ? 'keep' : 'restore' });
        const { fs, store } = open();
        const state = await store.readResumeState(forkId);
        assert.equal(fs.wholeReads.get(store.journalPath('p')), undefined, `fork at step ${step}: the parent's journal was read whole`);
        assert.deepEqual(state, await wholeFold(store, forkId), `fork at step ${step}`);
        assert.equal(state.stepId, step - 1);
        assert.equal(state.run.parent?.step, step);
      }
    });
  }

  it('a fork goes on by itself: its writer opens from the parent snapshots too, and its own records fold after them', async () => {
    await parentOf(open().store, 11, { revisions: false }, 24);
    await open().store.forkRun('p', { runId: 'f', step: 12, files: 'keep' });
    const writer = await open().store.openWriter('f');
    await randomSteps(writer, randomOf(12), 3, { revisions: false }, 12);
    await writer.close();
    for (const name of readdirSync(open().store.runDir('f')).filter((n) => n.startsWith('snapshot-')))
      rmSync(join(open().store.runDir('f'), name));
    const { fs, store } = open();
    const state = await store.readResumeState('f');
    assert.equal(fs.wholeReads.get(store.journalPath('p')), undefined);
    assert.deepEqual(state, await wholeFold(store, 'f'));
    assert.equal(state.stepId, 14);
  });

  for (const seed of [21, 22, 23, 24]) {
    it(`seed ${seed}: rollbacks and accepts in the parent after the point: the same state as the whole fold (read whole when needed)`, async () => {
      const random = randomOf(seed);
      await parentOf(open().store, seed, { revisions: true }, 30);
      for (let i = 0; i < 4; i++) {
        const step = 3 + random(27);
        await open().store.forkRun('p', { runId: `f${i}`, step, files: 'keep' });
        const { store } = open();
        assert.deepEqual(await store.readResumeState(`f${i}`), await wholeFold(store, `f${i}`), `fork at step ${step}`);
      }
    });
  }

  it('a parent whose snapshots are gone (pruned, lost): the fork still opens, from the parent whole, with the same state', async () => {
    await parentOf(open().store, 31, { revisions: false }, 20);
    await open().store.forkRun('p', { runId: 'f', step: 9, files: 'keep' });
    const fromSnapshots = await open().store.readResumeState('f');
    const dir = open().store.runDir('p');
    for (const name of readdirSync(dir).filter((n) => n.startsWith('snapshot-'))) rmSync(join(dir, name));
    const { fs, store } = open();
    assert.deepEqual(await store.readResumeState('f'), fromSnapshots);
    assert.ok((fs.wholeReads.get(store.journalPath('p')) ?? 0) > 0, 'read whole');
  });

  it('retention keeps the parent a fork stands on; after a collection the fork opens with the same state', async () => {
    await parentOf(open().store, 41, { revisions: false }, 20);
    const writer = await open().store.openWriter('p');
    await writer.append([{ type: 'run_end', status: 'completed' }]);
    await writer.close();
    await open().store.forkRun('p', { runId: 'f', step: 9, files: 'keep' });
    const before = await open().store.readResumeState('f');
    const result = await open().store.collectGarbage({ maxRuns: 0, maxBytes: 0 });
    assert.deepEqual(result.removedRuns, []);
    const { fs, store } = open();
    assert.deepEqual(await store.readResumeState('f'), before);
    assert.equal(fs.wholeReads.get(store.journalPath('p')), undefined);
  });

  it('older snapshots stay one a span of records, so that a fork finds one before its step', async () => {
    await parentOf(open().store, 51, { revisions: false }, 30);
    const names = readdirSync(open().store.runDir('p')).filter((n) => n.startsWith('snapshot-'));
    const spans = names.map((n) => Math.floor(Number(n.slice(9, 21)) / 16));
    assert.ok(names.length > 4, `${names.length} snapshots`);
    assert.ok(
      spans.slice(0, -2).every((span, i, all) => all.indexOf(span) === i),
      'one older snapshot a span',
    );
  });
});
