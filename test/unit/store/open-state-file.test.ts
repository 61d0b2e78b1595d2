import { strict as assert } from 'node:assert';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListingRow as RunStateFile } from '../../../src/core/store/device';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import { checkpoint, message, runInput } from './fixtures';

/** Counts state.json replacements (the rename that makes a new one current). */
class CountingStateWrites extends NodeStoreFs {
  stateWrites = 0;
  override async rename(from: string, to: string): Promise<void> {
    if (to.endsWith('state.json')) this.stateWrites++;
    await super.rename(from, to);
  }
}

describe('opening a writer and the state file', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'open-state-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  async function closedRun(): Promise<string> {
    const store = openFileStore(root);
    const writer = await store.createRun(runInput('r1'));
    await writer.append([message(0, 1, 'user', 'go'), checkpoint('c1', 1, 'after_model', 1)]);
    await writer.close();
    return join(root, 'runs', 'r1', 'state.json');
  }

  const stateOf = (path: string) => RunStateFile.parse(JSON.parse(readFileSync(path, 'utf8')));

  it('a run its writer closed cleanly is opened without rewriting its state file', async () => {
    const path = await closedRun();
    const before = readFileSync(path, 'utf8');
    const fs = new CountingStateWrites();
    const writer = await openFileStore(root, { fs }).openWriter('r1');
    assert.equal(fs.stateWrites, 0);
    assert.equal(readFileSync(path, 'utf8'), before);
    await writer.append([checkpoint('c2', 2, 'before_model', 1)]);
    await writer.close();
    assert.equal(stateOf(path).lastSeq, 4, 'the writer still brings the state file up to date when it writes');
  });

  it('nor when its last group came later than its last checkpoint and a snapshot covers it', async () => {
    let now = 1_000;
    const clock = { now: () => now };
    const writer = await openFileStore(root, { clock, snapshotStepBytes: 0 }).createRun(runInput('r1'));
    await writer.append([message(0, 1, 'user', 'go'), checkpoint('c1', 1, 'after_model', 1)]);
    now = 2_000;
    await writer.append([message(1, 1, 'assistant', 'a message without its checkpoint')]);
    await writer.close();
    const path = join(root, 'runs', 'r1', 'state.json');
    assert.equal(stateOf(path).updatedAt, 2_000);
    const fs = new CountingStateWrites();
    const reopened = await openFileStore(root, { fs, clock }).openWriter('r1');
    assert.equal(fs.stateWrites, 0, 'the state file already stood at the last record');
    await reopened.close();
  });

  it('a state file that lags the journal (a writer cut off before it rewrote it) is rewritten on open', async () => {
    const path = await closedRun();
    const current = stateOf(path);
    writeFileSync(path, JSON.stringify({ ...current, lastSeq: 1, steps: 0 }));
    const fs = new CountingStateWrites();
    const store = openFileStore(root, { fs });
    const writer = await store.openWriter('r1');
    assert.equal(fs.stateWrites, 1);
    assert.deepEqual(stateOf(path), current);
    assert.equal((await store.listRuns())[0]!.steps, 1);
    await writer.close();
  });

  it('a state file that is missing or unreadable is written on open', async () => {
    for (const damage of [(path: string) => rmSync(path), (path: string) => writeFileSync(path, '{"v":1,"runId":')]) {
      const path = await closedRun();
      const current = stateOf(path);
      damage(path);
      const fs = new CountingStateWrites();
      const writer = await openFileStore(root, { fs }).openWriter('r1');
      assert.equal(fs.stateWrites, 1);
      assert.deepEqual(stateOf(path), current);
      await writer.close();
      rmSync(join(root, 'runs'), { recursive: true, force: true });
    }
  });

  it('a torn tail cut on open is recorded in the state file', async () => {
    const path = await closedRun();
    const journal = join(root, 'runs', 'r1', 'journal.jsonl');
    const goodLength = readFileSync(journal).length;
    appendFileSync(journal, '{"s":4,"b":4,"e":4,"r":{"v":1');
    const fs = new CountingStateWrites();
    const writer = await openFileStore(root, { fs }).openWriter('r1');
    assert.equal(fs.stateWrites, 1);
    assert.deepEqual(
      { offset: stateOf(path).tornTailCut?.offset, bytes: stateOf(path).tornTailCut?.bytes },
      { offset: goodLength, bytes: '{"s":4,"b":4,"e":4,"r":{"v":1'.length },
    );
    await writer.close();
  });

  it('a run without its state file is still listed from its journal, and one that ended can still be collected', async () => {
    const store = openFileStore(root);
    const writer = await store.createRun(runInput('r1', 'the task'));
    await writer.append([message(0, 1, 'user', 'go'), checkpoint('c1', 1, 'after_model', 1)]);
    await writer.append([checkpoint('c2', 2, 'run_end', 1), { type: 'run_end', status: 'completed' }]);
    await writer.close();
    rmSync(join(root, 'runs', 'r1', 'state.json'));
    const [listed] = await openFileStore(root).listRuns();
    assert.deepEqual(
      { runId: listed!.runId, task: listed!.task, status: listed!.status, steps: listed!.steps, leased: listed!.leased },
      { runId: 'r1', task: 'the task', status: 'completed', steps: 2, leased: false },
    );
    assert.equal(listed!.damaged, undefined);
    assert.deepEqual((await openFileStore(root).collectGarbage({ maxRuns: 0 })).removedRuns, ['r1']);
  });

  it('a run without its state file whose journal is damaged is listed as damaged, and kept', async () => {
    await closedRun();
    rmSync(join(root, 'runs', 'r1', 'state.json'));
    const journal = join(root, 'runs', 'r1', 'journal.jsonl');
    const bytes = readFileSync(journal);
    bytes[10] = bytes[10]! ^ 0xff;
    writeFileSync(journal, bytes);
    const [listed] = await openFileStore(root).listRuns();
    assert.match(listed!.damaged ?? '', /damaged at byte 0/);
    assert.deepEqual((await openFileStore(root).collectGarbage({ maxRuns: 0 })).removedRuns, []);
  });
});
