import type { PoolClient } from 'pg';
import { StoreError } from '../../../core/store/contract';

// The store's tables in PostgreSQL. Each schema version is one migration, applied in order in
// one transaction under an advisory lock, so workers that start together migrate once. A database
// whose schema is newer than this build is refused with a clear error and left as it is.
//
//   ac_runs      one row per run: its listing row (JSON), the columns a claim reads of it (task,
//                status, updated_at, workspace_key: workspaceKey, which a worker must have to take
//                it), its journal's end in bytes and last seq. (parent_* are unused since version 4.)
//   ac_journal   one row per record: (run_id, seq), its byte offset `at` in the run's own journal,
//                and the record's checksummed journal line, the same bytes as a file journal's line;
//                one statement per commit group
//   ac_docs      a run's named documents (snapshots, facts logs, the damage note), as bytes in parts:
//                a put writes part 0 alone, an append adds the next part (a log's append writes its line, not the log)
//   ac_blobs     content-addressed bytes, deduplicated by their sha256
//   ac_leases    one row per run: the holder, its heartbeat, and the generation every append checks

export const PG_SCHEMA_VERSION = 4;

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE ac_runs (
     run_id text PRIMARY KEY,
     task text NOT NULL,
     created_at bigint NOT NULL,
     status text NOT NULL,
     steps integer NOT NULL,
     updated_at bigint NOT NULL,
     last_seq integer NOT NULL,
     bytes bigint NOT NULL,
     blob_refs text[] NOT NULL DEFAULT '{}',
     damaged text,
     workspace_key text NOT NULL,
     parent_run text,
     parent_step integer,
     parent_seq integer
   );
   CREATE INDEX ac_runs_blob_refs ON ac_runs USING gin (blob_refs);
   CREATE INDEX ac_runs_claimable ON ac_runs (workspace_key, updated_at) WHERE status IN ('running', 'interrupted');
   CREATE TABLE ac_journal (
     run_id text NOT NULL REFERENCES ac_runs ON DELETE CASCADE,
     seq integer NOT NULL,
     line text NOT NULL,
     PRIMARY KEY (run_id, seq)
   );
   CREATE TABLE ac_blobs (hash text PRIMARY KEY, bytes bytea NOT NULL, put_at bigint NOT NULL);
   CREATE TABLE ac_snapshots (
     run_id text NOT NULL REFERENCES ac_runs ON DELETE CASCADE,
     seq integer NOT NULL,
     snapshot text NOT NULL,
     PRIMARY KEY (run_id, seq)
   );
   CREATE TABLE ac_leases (
     run_id text PRIMARY KEY REFERENCES ac_runs ON DELETE CASCADE,
     holder_id text,
     pid integer NOT NULL DEFAULT 0,
     hostname text NOT NULL DEFAULT '',
     start_time text,
     acquired_at bigint NOT NULL DEFAULT 0,
     renewed_at bigint NOT NULL DEFAULT 0,
     generation bigint NOT NULL DEFAULT 0,
     fenced boolean NOT NULL DEFAULT false
   );`,
  // 2: a run's blob references as rows, not one array each append rewrote whole (and its GIN
  // index and TOAST with it); the claim index without updated_at, which every append changes.
  `CREATE TABLE ac_blob_refs (
     run_id text NOT NULL REFERENCES ac_runs ON DELETE CASCADE,
     hash text NOT NULL,
     PRIMARY KEY (run_id, hash)
   );
   CREATE INDEX ac_blob_refs_hash ON ac_blob_refs (hash);
   INSERT INTO ac_blob_refs (run_id, hash) SELECT DISTINCT run_id, unnest(blob_refs) FROM ac_runs;
   ALTER TABLE ac_runs DROP COLUMN blob_refs;
   DROP INDEX ac_runs_claimable;
   CREATE INDEX ac_runs_claimable ON ac_runs (workspace_key) WHERE status IN ('running', 'interrupted');`,
  // 3: the first new instruction since the run began or was forked, which the listing titles a fork by.
  `ALTER TABLE ac_runs ADD COLUMN instruction text;`,
  // 4: the journal device (pg-device.ts): each row's byte offset, each run's journal end; snapshots
  // and the damage note (naming the journal as PgJournalDevice.journalName) as documents; the
  // listing row as JSON, null for these migrated rows (the store then reads the run).
  `ALTER TABLE ac_journal ADD COLUMN at bigint;
   UPDATE ac_journal j SET at = w.at FROM (
     SELECT run_id, seq, coalesce(sum(octet_length(line) + 1) OVER (
       PARTITION BY run_id ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS at
     FROM ac_journal) w
    WHERE j.run_id = w.run_id AND j.seq = w.seq;
   ALTER TABLE ac_journal ALTER COLUMN at SET NOT NULL;
   CREATE UNIQUE INDEX ac_journal_at ON ac_journal (run_id, at);
   UPDATE ac_runs r SET bytes = coalesce((SELECT sum(octet_length(j.line) + 1) FROM ac_journal j WHERE j.run_id = r.run_id), 0);
   CREATE TABLE ac_docs (
     run_id text NOT NULL REFERENCES ac_runs ON DELETE CASCADE,
     name text NOT NULL,
     part integer NOT NULL,
     bytes bytea NOT NULL,
     PRIMARY KEY (run_id, name, part)
   );
   INSERT INTO ac_docs (run_id, name, part, bytes)
     SELECT run_id, 'snapshot-' || lpad(seq::text, 12, '0') || '.json', 0, convert_to(snapshot || E'\\n', 'UTF8') FROM ac_snapshots;
   INSERT INTO ac_docs (run_id, name, part, bytes)
     SELECT run_id, 'damage.json', 0, convert_to(json_build_object(
       'file', 'postgres journal of run ' || run_id, 'offset', 0, 'message', damaged, 'at', updated_at)::text, 'UTF8')
     FROM ac_runs WHERE damaged IS NOT NULL;
   ALTER TABLE ac_runs ADD COLUMN listing text;
   ALTER TABLE ac_runs DROP COLUMN damaged, DROP COLUMN steps, DROP COLUMN created_at, DROP COLUMN instruction;
   DROP TABLE ac_snapshots;
   DROP TABLE ac_blob_refs;`,
];

function newer(version: number, target: number): StoreError {
  return new StoreError(
    `the database's agent-checkpoints schema is version ${version}; this build knows up to ${target}; nothing was changed`,
    'future_version',
  );
}

/** The schema's version as recorded, or 0 when the database holds none yet (one read, no write). */
async function recordedVersion(client: PoolClient): Promise<number> {
  try {
    const { rows } = await client.query<{ version: number }>('SELECT version FROM ac_schema');
    return rows[0]?.version ?? 0;
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return 0; // undefined_table
    throw error;
  }
}

/** Brings the database's schema to PG_SCHEMA_VERSION (one read when it already is); refuses a newer one. */
export async function migrateSchema(client: PoolClient, target = PG_SCHEMA_VERSION): Promise<void> {
  const seen = await recordedVersion(client);
  if (seen === target) return;
  if (seen > target) throw newer(seen, target);
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('agent-checkpoints schema'))`);
    await client.query('CREATE TABLE IF NOT EXISTS ac_schema (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)');
    let version = await recordedVersion(client);
    if (version > target) throw newer(version, target);
    for (; version < target; version++) await client.query(MIGRATIONS[version]!);
    await client.query('INSERT INTO ac_schema (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = $1', [version]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
