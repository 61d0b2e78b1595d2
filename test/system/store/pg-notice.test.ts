import { strict as assert } from 'node:assert';
import { PgCheckpointStore } from '../../../src/host/node/pg/pg-store';
import { nodeProcessIdentity } from '../../../src/host/node/store-factory';
import { testPostgres, type TestPostgres } from '../../support/pg-server';
import { checkpoint, message, runInput } from '../../unit/store/fixtures';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

// The change notice of the PostgreSQL store (LISTEN/NOTIFY): two store objects on one schema,
// as two processes sharing a database. Notices of one connection arrive in commit order, so an
// append of the other object told after some writes proves those writes told nothing.
describe('PostgreSQL store change notice (watchAppends)', () => {
  let server: TestPostgres;
  let schema: string;
  let opened: PgCheckpointStore[];
  const open = (inSchema = schema) => {
    const store = new PgCheckpointStore({ url: server.url, schema: inSchema, leaseTimeoutMs: 10_000, process: nodeProcessIdentity });
    opened.push(store);
    return store;
  };

  beforeEach(async () => {
    server = await testPostgres();
    schema = await server.newSchema();
    opened = [];
  });
  afterEach(async () => {
    await Promise.all(opened.map((s) => s.dispose()));
    await server.dropSchema(schema);
  });

  it("tells another store object's new run and appends; never its own, never a heartbeat, never another schema's", async () => {
    const here = open();
    const other = open();
    const elsewhere = open(await server.newSchema());
    const told: string[] = [];
    const watch = here.watchAppends((runId) => told.push(runId));
    await watch.whenListening!();

    const theirs = await other.createRun(runInput('r-other'));
    await until(() => told.includes('r-other'), 'the new run');
    await theirs.append([checkpoint('c1', 1, 'before_model', 0)]);
    await until(() => told.length === 2, 'the append');
    assert.deepEqual(told, ['r-other', 'r-other']);

    const mine = await here.createRun(runInput('r-here'));
    await mine.append([message(0, 0, 'user', 'mine')]);
    await mine.close();
    await theirs.renewLease();
    await theirs.renewLease();
    const far = await elsewhere.createRun(runInput('r-elsewhere'));
    await far.append([message(0, 0, 'user', 'another schema')]);
    await far.close();
    // The barrier: the other object's next append; nothing before it may have been told.
    await theirs.append([message(0, 1, 'user', 'barrier')]);
    await until(() => told.length >= 3, 'the barrier append');
    await theirs.close();
    assert.deepEqual(told, ['r-other', 'r-other', 'r-other'], 'own writes, heartbeats and other schemas are no change');

    // A second object of this process is "another holder" too: here hears its append.
    const writer = await open().openWriter('r-here');
    await writer.append([message(1, 1, 'assistant', 'from a second object')]);
    await until(() => told.includes('r-here'), "a second object's append");
    await writer.close();
    watch.close();
  });

  it('a watch whose connection is cut reconnects and tells what was appended meanwhile', async () => {
    const here = open();
    const other = open();
    const told: string[] = [];
    const watch = here.watchAppends((runId) => told.push(runId));
    await watch.whenListening!();
    const killed = await other.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::integer AS n FROM pg_stat_activity
        WHERE application_name = 'agent-checkpoints-watch' AND pid <> pg_backend_pid()`,
    );
    assert.equal(killed.rows[0]!.n, 1, "the watch's own connection");
    // Written while the watch is (most likely) away: told by the catch-up after it reconnects, or live.
    await (await other.createRun(runInput('r-gap'))).close();
    await until(() => told.includes('r-gap'), 'the run written across the cut');
    await (await other.createRun(runInput('r-live'))).close();
    await until(() => told.includes('r-live'), 'a run written once reconnected');
    assert.deepEqual([...new Set(told)], ['r-gap', 'r-live']);
    watch.close();
  });
  it("tells another store object's lease taken, released and fenced (the model needs no file watcher); never a heartbeat", async () => {
    const here = open();
    const other = open();
    await (await here.createRun(runInput('r-lease'))).close();
    const told: string[] = [];
    const watch = here.watchLeases((runId) => told.push(runId));
    await watch.whenListening!();

    const writer = await other.openWriter('r-lease');
    await until(() => told.length === 1, 'the lease taken');
    await writer.renewLease();
    await writer.renewLease();
    await writer.close();
    await until(() => told.length === 2, 'the lease released');
    assert.deepEqual(told, ['r-lease', 'r-lease'], 'heartbeats told nothing between the take and the release');
    // A take-over fences a live holder's lease (a free lease has nothing to fence).
    const held = await other.openWriter('r-lease');
    await until(() => told.length === 3, 'the lease taken again');
    await open().fenceLease('r-lease');
    await until(() => told.length === 4, 'the lease fenced');
    await held.close();
    watch.close();
  });
});
