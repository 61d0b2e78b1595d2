import { strict as assert } from 'node:assert';
import pg from 'pg';
import { StoreError } from '../../../src/core/store/contract';
import { migrateSchema, PG_SCHEMA_VERSION } from '../../../src/host/node/pg/pg-schema';
import { PgCheckpointStore, type PgStoreOptions } from '../../../src/host/node/pg/pg-store';
import { nodeProcessIdentity } from '../../../src/host/node/store-factory';
import { testPostgres, type TestPostgres } from '../../support/pg-server';
import { runStoreConformance } from '../../unit/store/conformance';
import { checkpoint, ManualClock, message, runInput } from '../../unit/store/fixtures';

const isCode = (code: StoreError['code']) => (e: unknown) => e instanceof StoreError && e.code === code;

// The store contract on PostgreSQL: every store of a test shares one fresh schema, as two
// processes share one database.
for (const [name, snapshotStepBytes] of [
  ['postgres', undefined],
  ['postgres, a snapshot after every append', 0],
] as const) {
  runStoreConformance(name, async ({ clock, leaseTimeoutMs }) => {
    const server = await testPostgres();
    const schema = await server.newSchema();
    const opened: PgCheckpointStore[] = [];
    return {
      open: () => {
        const store = new PgCheckpointStore({
          url: server.url,
          schema,
          clock,
          leaseTimeoutMs,
          blobGraceMs: 60_000,
          process: nodeProcessIdentity,
          ...(snapshotStepBytes !== undefined ? { snapshotStepBytes } : {}),
        });
        opened.push(store);
        return store;
      },
      dispose: async () => {
        await Promise.all(opened.map((s) => s.dispose()));
        await server.dropSchema(schema);
      },
    };
  });
}

describe('PostgreSQL store: fencing, snapshots, damage, schema', () => {
  let server: TestPostgres;
  let schema: string;
  let clock: ManualClock;
  const opened: PgCheckpointStore[] = [];
  const open = (extra: Partial<PgStoreOptions> = {}) => {
    const store = new PgCheckpointStore({ url: server.url, schema, clock, leaseTimeoutMs: 10_000, process: nodeProcessIdentity, ...extra });
    opened.push(store);
    return store;
  };
  const rows = async (runId: string) =>
    (await open().query<{ n: number }>('SELECT count(*)::integer AS n FROM ac_journal WHERE run_id = $1', [runId])).rows[0]!.n;

  beforeEach(async () => {
    server = await testPostgres();
    schema = await server.newSchema();
    clock = new ManualClock();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.dispose()));
    await server.dropSchema(schema);
  });

  it('a writer whose lease was taken over appends nothing, says so, and stays stopped', async () => {
    const a = await open().createRun(runInput('r1'));
    await a.append([message(0, 0, 'user', 'hello')]);
    clock.advance(20_000); // a's heartbeat is older than the timeout: a paused or partitioned holder
    const b = await open().openWriter('r1');
    await b.append([message(1, 1, 'assistant', 'from b')]);
    await assert.rejects(
      a.append([message(1, 1, 'assistant', 'from a')]),
      (e: unknown) => e instanceof StoreError && e.code === 'lease_lost' && /another writer took the run over/.test(e.message),
    );
    await assert.rejects(a.append([message(2, 1, 'assistant', 'again')]), isCode('lease_lost'));
    assert.equal(await rows('r1'), 3, 'run, hello, from b: nothing of a after the take-over');
    const records = await open().readRecords('r1');
    assert.ok(!records.some((r) => r.type === 'message' && JSON.stringify(r).includes('from a')));
    await b.close();
  });

  it('a fenced lease stops its live holder at its next append, and the run can be opened at once', async () => {
    const a = await open().createRun(runInput('r1'));
    await open().fenceLease('r1');
    await assert.rejects(a.append([message(0, 0, 'user', 'late')]), isCode('lease_lost'));
    const b = await open().openWriter('r1');
    assert.equal(b.resumeState.lastSeq, 1);
    await b.close();
    await assert.rejects(open().fenceLease('nope'), isCode('not_found'));
  });

  it('resume reads the newest snapshot and the rows after it; a whole read still checks every row', async () => {
    const writer = await open({ snapshotStepBytes: 0 }).createRun(runInput('r1'));
    await writer.append([checkpoint('c0', 0, 'before_model', 0)]);
    for (let i = 0; i < 5; i++) await writer.append([message(i, i, i % 2 ? 'assistant' : 'user', `m${i}`)]);
    await writer.close();
    const store = open();
    // Damage a row the snapshot covers and does not name (an older checkpoint; the live context's
    // messages it names by row, and reads): resume does not read it, a whole read refuses the run.
    await store.query(`UPDATE ac_journal SET line = replace(line, 'c0', 'cX') WHERE run_id = 'r1' AND seq = 2`);
    const state = await store.readResumeState('r1');
    assert.equal(state.lastSeq, 7);
    assert.equal(state.messages.length, 5);
    await assert.rejects(
      store.readRun('r1'),
      (e: unknown) => e instanceof StoreError && e.code === 'damaged' && /postgres journal of run r1 is damaged/.test(e.message),
    );
    const report = await store.verify('r1');
    assert.equal(report.ok, false);
    assert.match((await store.listRuns())[0]!.damaged ?? '', /checksum/);
  });

  it('a damaged row refuses a writer, naming the run', async () => {
    const writer = await open().createRun(runInput('r1'));
    await writer.append([message(0, 0, 'user', 'hello')]);
    await writer.close();
    await open().query(`UPDATE ac_journal SET line = replace(line, 'hello', 'HELLO') WHERE run_id = 'r1' AND seq = 2`);
    await assert.rejects(open().openWriter('r1'), isCode('damaged'));
    const again = await open()
      .listRuns()
      .then((runs) => runs[0]!);
    assert.equal(again.leased, false, 'the refused open released the lease');
  });

  it('a database of a newer schema is refused and left as it is; a server that is not there is a clear error without the password', async () => {
    const store = open();
    await store.listRuns();
    await store.query('UPDATE ac_schema SET version = 99');
    await assert.rejects(
      open().listRuns(),
      (e: unknown) => e instanceof StoreError && e.code === 'future_version' && /version 99/.test(e.message),
    );
    const port = new URL(server.url).port;
    const gone = new PgCheckpointStore({ url: `postgres://someone:s3cret@127.0.0.1:1/db`, clock });
    opened.push(gone);
    await assert.rejects(gone.listRuns(), (e: unknown) => {
      assert.ok(e instanceof StoreError && e.code === 'io', String(e));
      assert.doesNotMatch(e.message, /s3cret/);
      assert.match(e.message, /PostgreSQL at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/db/);
      return true;
    });
    assert.ok(port);
  });

  it('a version 1 database is brought to the current schema, its runs kept (pg-device.test.ts checks versions 2 and 3 row by row)', async () => {
    const client = new pg.Client({ connectionString: server.url, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      await migrateSchema(client as pg.PoolClient, 1);
      await client.query(
        `INSERT INTO ac_runs (run_id, task, created_at, status, steps, updated_at, last_seq, bytes, blob_refs, workspace_key)
         VALUES ('old', 't', 0, 'completed', 1, 0, 1, 10, ARRAY['b', 'a', 'b'], 'folder:/ws')`,
      );
    } finally {
      await client.end();
    }
    const store = open();
    const runs = await store.query<{ run_id: string; workspace_key: string }>('SELECT run_id, workspace_key FROM ac_runs');
    assert.deepEqual(runs.rows, [{ run_id: 'old', workspace_key: 'folder:/ws' }]);
    const version = await store.query<{ version: number }>('SELECT version FROM ac_schema');
    assert.equal(version.rows[0]!.version, PG_SCHEMA_VERSION);
  });
});
