import { strict as assert } from 'node:assert';
import { PgCheckpointStore } from '../../../src/host/node/pg/pg-store';
import { nodeProcessIdentity } from '../../../src/host/node/store-factory';
import { testPostgres, type TestPostgres } from '../../support/pg-server';
import { ManualClock, message, runInput } from '../../unit/store/fixtures';
import { randomOf, randomSteps, wholeFold, type Shape } from '../../unit/store/fork-random';

// The PostgreSQL store opens a fork from its parent's snapshot rows too (pg-fork.ts), with the
// state the whole fold gives: random runs, random fork points (fork-from-snapshot.test.ts for files).

describe('PostgreSQL: a fork opens from its parent snapshots', () => {
  let server: TestPostgres;
  let schema: string;
  const opened: PgCheckpointStore[] = [];
  const clock = new ManualClock();

  /** A store that notes when it read the parent's rows whole (a fork's whole read reads its parent's; its own are few). */
  const open = () => {
    const store = new PgCheckpointStore({
      url: server.url,
      schema,
      clock,
      process: nodeProcessIdentity,
      snapshotStepBytes: 1024,
      forkSpan: 16,
    });
    const whole: string[] = [];
    // A whole read of a journal: from its start to its end.
    const read = store.device.readJournal.bind(store.device);
    store.device.readJournal = (runId, from, end) => (
      (from ?? 0) === 0 && end === undefined && runId === 'p' && whole.push(runId),
      read(runId, from, end)
    );
    opened.push(store);
    return { store, whole };
  };

  beforeEach(async () => {
    server = await testPostgres();
    schema = await server.newSchema();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.dispose()));
    await server.dropSchema(schema);
  });

  async function parentOf(seed: number, shape: Shape, steps: number): Promise<void> {
    const writer = await open().store.createRun(runInput('p'));
    await writer.append([message(0, 0, 'user', 'task')]);
    await randomSteps(writer, randomOf(seed), steps, shape);
    await writer.close();
  }

  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: at random steps, the state the whole fold gives, without reading the parent's rows whole`, async () => {
      const random = randomOf(seed * 7919);
      await parentOf(seed, { revisions: false }, 30);
      for (let i = 0; i < 3; i++) {
        const step = 3 + random(27);
        await open().store.forkRun('p', { runId: `f${i}`, step, files: 'keep' });
        const { store, whole } = open();
        const state = await store.readResumeState(`f${i}`);
        assert.deepEqual(whole, [], `fork at step ${step}: read whole`);
        assert.deepEqual(state, await wholeFold(store, `f${i}`), `fork at step ${step}`);
        assert.equal(state.stepId, step - 1);
      }
    });
  }

  it('rollbacks in the parent after the point: the same state as the whole fold', async () => {
    const random = randomOf(77);
    await parentOf(21, { revisions: true }, 30);
    for (let i = 0; i < 3; i++) {
      const step = 3 + random(27);
      await open().store.forkRun('p', { runId: `f${i}`, step, files: 'keep' });
      const { store } = open();
      assert.deepEqual(await store.readResumeState(`f${i}`), await wholeFold(store, `f${i}`), `fork at step ${step}`);
    }
  });

  it("a parent whose snapshot rows are gone: the fork opens from the parent's rows whole, with the same state", async () => {
    await parentOf(31, { revisions: false }, 20);
    await open().store.forkRun('p', { runId: 'f', step: 9, files: 'keep' });
    const fromSnapshots = await open().store.readResumeState('f');
    await open().store.query("DELETE FROM ac_docs WHERE run_id = 'p' AND name LIKE 'snapshot-%'");
    const { store, whole } = open();
    assert.deepEqual(await store.readResumeState('f'), fromSnapshots);
    assert.ok(whole.includes('p'), 'read whole');
  });
});
