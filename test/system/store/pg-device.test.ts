import { strict as assert } from 'node:assert';
import pg from 'pg';
import { StoreError } from '../../../src/core/store/contract';
import { FORMAT_VERSION } from '../../../src/core/store/records';
import { PgJournalDevice } from '../../../src/host/node/pg/pg-device';
import { migrateSchema } from '../../../src/host/node/pg/pg-schema';
import { testPostgres, type TestPostgres } from '../../support/pg-server';
import { runDeviceConformance } from '../../unit/store/device-conformance';
import { concat, firstGroup, group, heldLease, lease, listing, sameBytes, T0 } from '../../unit/store/device-fixtures';

const isCode = (code: StoreError['code']) => (e: unknown) => e instanceof StoreError && e.code === code;

// The journal device contract on PostgreSQL: the devices of a case share one fresh schema, as
// two processes share one database.
runDeviceConformance('postgres', async () => {
  const server = await testPostgres();
  const schema = await server.newSchema();
  const opened: PgJournalDevice[] = [];
  const open = () => {
    const device = new PgJournalDevice({ url: server.url, schema });
    opened.push(device);
    return device;
  };
  return {
    device: open(),
    other: open,
    close: async () => {
      await Promise.all(opened.map((d) => d.dispose()));
      await server.dropSchema(schema);
    },
  };
});

describe('PostgreSQL journal device', () => {
  let server: TestPostgres;
  let schema: string;
  let client: pg.Client;
  let device: PgJournalDevice;

  beforeEach(async () => {
    server = await testPostgres();
    schema = await server.newSchema();
    client = new pg.Client({ connectionString: server.url, options: `-c search_path=${schema}` });
    await client.connect();
    device = new PgJournalDevice({ url: server.url, schema });
  });
  afterEach(async () => {
    await device.dispose();
    await client.end();
    await server.dropSchema(schema);
  });

  /** The rows of a schema-3 run: its journal lines by seq, as today's store wrote them. */
  async function oldRun(runId: string, bytes: Uint8Array, firstSeq: number, columns: { damaged?: string; parent?: string } = {}) {
    const lines = new TextDecoder().decode(bytes).split('\n').slice(0, -1);
    await client.query(
      `INSERT INTO ac_runs (run_id, task, created_at, status, steps, updated_at, last_seq, bytes, damaged, workspace_key, parent_run, parent_seq)
       VALUES ($1, 'old task', $2, 'running', 1, $3, $4, $5, $6, 'git:abc', $7, $8)`,
      [
        runId,
        T0,
        T0 + 7,
        firstSeq + lines.length - 1,
        lines.join('').length,
        columns.damaged ?? null,
        columns.parent ?? null,
        columns.parent ? 4 : null,
      ],
    );
    for (const [i, line] of lines.entries())
      await client.query('INSERT INTO ac_journal (run_id, seq, line) VALUES ($1, $2, $3)', [runId, firstSeq + i, line]);
  }

  for (const from of [2, 3]) {
    it(`migrates a schema-${from} database (runs, snapshots, a fork, a damaged run) to journals read back byte-exact at their offsets`, async () => {
      await migrateSchema(client as unknown as pg.PoolClient, from);
      const plain = concat(firstGroup('r-plain'), group(2, 3));
      const fork = group(5, 2, 'the fork’s own');
      await oldRun('r-plain', plain, 1);
      await oldRun('r-fork', fork, 5, { parent: 'r-plain' });
      await oldRun('r-bad', firstGroup('r-bad'), 1, { damaged: 'a complete line does not match its checksum' });
      await client.query(
        `INSERT INTO ac_snapshots (run_id, seq, snapshot) VALUES ('r-plain', 4, '{"v":3,"ünï":1}'), ('r-plain', 1, 'one')`,
      );
      await client.query(
        `INSERT INTO ac_leases (run_id, holder_id, pid, hostname, acquired_at, renewed_at, generation) VALUES ('r-plain', 'a', 7, 'box', $1, $1, 2)`,
        [T0],
      );
      await client.query(`INSERT INTO ac_leases (run_id) VALUES ('r-fork'), ('r-bad')`);
      await client.query(`INSERT INTO ac_blob_refs (run_id, hash) VALUES ('r-plain', 'abc')`);

      sameBytes(await device.readJournal('r-plain'), plain);
      assert.equal((await client.query('SELECT version FROM ac_schema')).rows[0].version, 4);
      const ats = async (runId: string) =>
        (await client.query<{ at: string }>('SELECT at FROM ac_journal WHERE run_id = $1 ORDER BY seq', [runId])).rows.map((r) =>
          Number(r.at),
        );
      const starts = (bytes: Uint8Array) => [
        0,
        ...[...bytes.entries()].filter(([i, b]) => b === 0x0a && i < bytes.length - 1).map(([i]) => i + 1),
      ];
      assert.deepEqual(await ats('r-plain'), starts(plain));
      assert.deepEqual(await ats('r-fork'), starts(fork), "a fork's rows begin at 0");
      assert.equal(await device.journalSize('r-plain'), plain.length);
      sameBytes(await device.readJournal('r-plain', 100, 260), plain.subarray(100, 260));
      sameBytes(await device.readJournal('r-fork'), fork);

      const text = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('utf8'));
      assert.deepEqual(await device.listDocs('r-plain', 'snapshot-'), ['snapshot-000000000001.json', 'snapshot-000000000004.json']);
      assert.equal(text(await device.getDoc('r-plain', 'snapshot-000000000004.json')), '{"v":3,"ünï":1}\n');
      const runs = await device.listRuns();
      assert.deepEqual(
        runs.map((r) => [r.runId, r.listing, r.lease.kind, r.journalBytes]),
        [
          ['r-bad', null, 'none', firstGroup('r-bad').length],
          ['r-fork', null, 'none', fork.length],
          ['r-plain', null, 'held', plain.length],
        ],
      );
      assert.deepEqual(JSON.parse(text(runs[0]!.damage)!), {
        file: 'postgres journal of run r-bad',
        offset: 0,
        message: 'a complete line does not match its checksum',
        at: T0 + 7,
      });
      const gone = await client.query(`SELECT to_regclass('ac_snapshots') AS s, to_regclass('ac_blob_refs') AS b`);
      assert.deepEqual(gone.rows[0], { s: null, b: null });

      // The migrated run goes on: the next group lands at its end under its lease.
      const held = heldLease(runs[2]!.lease);
      const next = group(5, 1);
      await device.appendGroup('r-plain', { bytes: next, at: plain.length, firstSeq: 5 }, held, listing('r-plain', { lastSeq: 5 }));
      sameBytes(await device.readJournal('r-plain'), concat(plain, next));
      assert.deepEqual(await ats('r-plain'), starts(concat(plain, next)));
      assert.equal((await device.readListing('r-plain'))?.lastSeq, 5);
    });
  }

  it('refuses to cut inside a line (invalid) and cuts nothing', async () => {
    const first = firstGroup('r1');
    await device.createRun('r1', first, listing('r1'), lease('a', 1));
    await device.appendGroup('r1', { bytes: group(2, 2), at: first.length, firstSeq: 2 }, lease('a', 1));
    const size = await device.journalSize('r1');
    await assert.rejects(device.truncateJournal('r1', first.length + 3), isCode('invalid'));
    assert.equal(await device.journalSize('r1'), size);
    await assert.rejects(device.truncateJournal('nope', 0), isCode('not_found'));
  });

  it('reads a listing row of a newer format as none', async () => {
    await device.createRun('r1', firstGroup('r1'), listing('r1'), null);
    await client.query('UPDATE ac_runs SET listing = $1', [JSON.stringify({ v: FORMAT_VERSION + 1, ...listing('r1') })]);
    assert.equal(await device.readListing('r1'), null);
    await client.query(`UPDATE ac_runs SET listing = '{not json'`);
    assert.equal(await device.readListing('r1'), null);
  });

  it('names the server in its errors, never its password', async () => {
    const away = new PgJournalDevice({ url: 'postgres://me:s3cret@127.0.0.1:1/db' });
    try {
      await assert.rejects(away.journalSize('r1'), (e: unknown) => {
        assert.ok(isCode('io')(e));
        assert.match((e as Error).message, /127\.0\.0\.1:1/);
        assert.doesNotMatch((e as Error).message, /s3cret/);
        return true;
      });
    } finally {
      await away.dispose();
    }
  });
});
