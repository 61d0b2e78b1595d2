import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../../core/ports';
import { StoreError } from '../../../core/store/contract';
import type {
  BlobEntry,
  DeviceGroup,
  DeviceRun,
  DeviceWatch,
  JournalDevice,
  LeaseRead,
  ListingRow,
  NewListingRow,
} from '../../../core/store/device';
import { DEFAULT_LEASE_TIMEOUT_MS, type LeaseInfo } from '../../../core/store/lease-policy';
import { RUN_ID } from '../../../core/store/run-id';
import type { StoreOptions } from '../../../core/store/store';
import { claimPgDeviceRun, LEASE_COLUMNS, leaseParams, listPgDeviceRuns, readPgLease, swapPgLease } from './pg-device-leases';
import { listingParams, parseListing, plainBytes, rowsOf, setListing, sliceOfRows } from './pg-device-rows';
import { notifySql, PgWatch } from './pg-notify';
import { PgPool, type PgPoolOptions } from './pg-pool';

/** The store's clock and lease timeout (how far back a watch that reconnects looks: pg-notify.ts). */
export type PgDeviceOptions = PgPoolOptions & Pick<StoreOptions, 'clock' | 'leaseTimeoutMs'>;

/**
 * The journal device in PostgreSQL (its tables: pg-schema.ts). An append (appendGroup) and a lease
 * change (pg-device-leases.ts) are one statement each, which sends its notice (pg-notify.ts).
 */
export class PgJournalDevice extends PgPool implements JournalDevice {
  readonly clock: Clock;
  readonly leaseTimeoutMs: number;
  /** Names this device object in its change notices, so its own watches skip them. */
  readonly token = randomUUID();
  /** The last seq this device object wrote per run: a watch that reconnects skips runs written last here. */
  readonly ownLast = new Map<string, number>();
  private readonly watches = new Set<PgWatch>();

  constructor(options: PgDeviceOptions) {
    super(options);
    this.clock = options.clock ?? systemClock;
    this.leaseTimeoutMs = options.leaseTimeoutMs ?? DEFAULT_LEASE_TIMEOUT_MS;
  }

  journalName(runId: string): string {
    if (!RUN_ID.test(runId)) throw new StoreError(`not a valid run id: ${JSON.stringify(runId)}`, 'invalid');
    return `postgres journal of run ${runId}`;
  }

  notFound(runId: string): StoreError {
    return new StoreError(`run ${runId} not found`, 'not_found', this.journalName(runId));
  }

  // ── journals ──

  async createRun(runId: string, bytes: Uint8Array, listing: NewListingRow, lease: LeaseInfo | null): Promise<void> {
    const journal = this.journalName(runId);
    const { lines, offsets, seqs } = rowsOf(bytes, journal, true);
    const { rows } = await this.query<{ created: number }>(
      `WITH run AS (
         INSERT INTO ac_runs (run_id, listing, task, status, updated_at, workspace_key, last_seq, bytes)
         VALUES ($1, $2, $3, $4, $5, coalesce($6, ''), $7, $8) ON CONFLICT (run_id) DO NOTHING RETURNING run_id
       ), journal AS (
         INSERT INTO ac_journal (run_id, seq, at, line) SELECT $1, s, a, l FROM unnest($9::integer[], $10::bigint[], $11::text[]) AS t(s, a, l)
          WHERE EXISTS (SELECT 1 FROM run)
       ), lease AS (
         INSERT INTO ac_leases (run_id, ${LEASE_COLUMNS}) SELECT run_id, $12, $13, $14, $15, $16, $17, $18, $19 FROM run
       ) SELECT (SELECT count(*) FROM run)::integer AS created, (SELECT ${notifySql('run_id', '$20')} FROM run) AS told`,
      [runId, ...listingParams(listing), seqs.at(-1), bytes.length, seqs, offsets, lines, ...leaseParams(lease), this.token],
    );
    if (rows[0]?.created !== 1) throw new StoreError(`run ${runId} already exists`, 'invalid', journal);
    this.ownLast.set(runId, seqs.at(-1)!);
  }

  async journalSize(runId: string): Promise<number | null> {
    this.journalName(runId);
    const { rows } = await this.query<{ bytes: number }>('SELECT bytes FROM ac_runs WHERE run_id = $1', [runId]);
    return rows[0]?.bytes ?? null;
  }

  /** The rows that overlap from..end (the first is the last that begins at or before `from`), sliced to it. */
  async readJournal(runId: string, from = 0, end?: number): Promise<Uint8Array> {
    this.journalName(runId);
    const { rows } = await this.query<{ at: number | null; line: string | null }>(
      `SELECT j.at, j.line FROM ac_runs r LEFT JOIN ac_journal j ON j.run_id = r.run_id
          AND j.at >= coalesce((SELECT max(at) FROM ac_journal WHERE run_id = $1 AND at <= $2), 0)
          AND ($3::bigint IS NULL OR j.at < $3)
        WHERE r.run_id = $1 ORDER BY j.at`,
      [runId, from, end ?? null],
    );
    if (rows.length === 0) throw this.notFound(runId);
    const lines = rows.flatMap((row) => (row.line === null ? [] : [row.line]));
    return sliceOfRows(lines, rows[0]!.at ?? from, from, end);
  }

  /**
   * One statement, so one round trip and one commit: the lease row is renewed only while holder,
   * generation and fence are still the writer's and the journal ends at `group.at`; the rows, the
   * journal's end and the listing go in only if it was.
   */
  async appendGroup(runId: string, group: DeviceGroup, lease: LeaseInfo, listing?: NewListingRow): Promise<LeaseInfo> {
    const { lines, offsets } = rowsOf(group.bytes, this.journalName(runId));
    const now = this.clock.now();
    const lastSeq = group.firstSeq + lines.length - 1;
    const listed = listing ? `, ${setListing(12)}` : ', updated_at = greatest(updated_at, $4)';
    const params = [runId, lease.holderId, lease.generation, now, group.at, group.firstSeq, lines, offsets, group.bytes.length, lastSeq];
    const { rows } = await this.query<{ held: number; end: number | null }>(
      `WITH lease AS (
         UPDATE ac_leases SET renewed_at = $4 WHERE run_id = $1 AND holder_id = $2 AND generation = $3 AND NOT fenced
            AND EXISTS (SELECT 1 FROM ac_runs WHERE run_id = $1 AND bytes = $5) RETURNING run_id
       ), rows AS (
         INSERT INTO ac_journal (run_id, seq, at, line) SELECT $1, $6 + t.i - 1, $5 + t.o, t.l
           FROM unnest($7::text[], $8::bigint[]) WITH ORDINALITY AS t(l, o, i) WHERE EXISTS (SELECT 1 FROM lease)
       ), run AS (
         UPDATE ac_runs SET bytes = $5 + $9, last_seq = $10${listed} WHERE run_id = $1 AND EXISTS (SELECT 1 FROM lease)
       ) SELECT (SELECT count(*) FROM lease)::integer AS held, (SELECT ${notifySql('$1', '$11')} FROM lease) AS told,
                (SELECT bytes FROM ac_runs WHERE run_id = $1) AS end`,
      [...params, this.token, ...(listing ? listingParams(listing) : [])],
    );
    const row = rows[0];
    if (row?.held !== 1) throw this.refused(runId, group, lease, row?.end ?? null);
    this.ownLast.set(runId, lastSeq);
    return { ...lease, renewedAt: now };
  }

  private refused(runId: string, group: DeviceGroup, lease: LeaseInfo, end: number | null): StoreError {
    if (end === null) return this.notFound(runId);
    const why =
      end !== group.at
        ? `another writer took the run over and appended: its journal ends at byte ${end}, not ${group.at}`
        : `generation ${lease.generation} is no longer current: another writer took the run over`;
    return new StoreError(`this writer lost the lease of run ${runId} (${why}); nothing was appended`, 'lease_lost');
  }

  /** Deletes the rows from `length` on; a row that `length` falls inside is refused (the device holds whole lines). */
  async truncateJournal(runId: string, length: number): Promise<void> {
    const journal = this.journalName(runId);
    const { rows } = await this.query<{ runs: number; inside: number }>(
      `WITH inside AS (
         SELECT 1 FROM ac_journal WHERE run_id = $1 AND at < $2 AND at + octet_length(line) + 1 > $2
            AND at = (SELECT max(at) FROM ac_journal WHERE run_id = $1 AND at < $2)
       ), cut AS (
         DELETE FROM ac_journal WHERE run_id = $1 AND at >= $2 AND NOT EXISTS (SELECT 1 FROM inside)
       ), run AS (
         UPDATE ac_runs SET bytes = $2,
                last_seq = coalesce((SELECT seq FROM ac_journal WHERE run_id = $1 AND at < $2 ORDER BY at DESC LIMIT 1), 0)
          WHERE run_id = $1 AND bytes > $2 AND NOT EXISTS (SELECT 1 FROM inside)
       ) SELECT (SELECT count(*) FROM ac_runs WHERE run_id = $1)::integer AS runs, (SELECT count(*) FROM inside)::integer AS inside`,
      [runId, length],
    );
    if (rows[0]?.runs !== 1) throw this.notFound(runId);
    if (rows[0].inside > 0)
      throw new StoreError(`${journal}: byte ${length} is inside a line; nothing was cut`, 'invalid', journal, length);
  }

  async closeJournal(): Promise<void> {
    // a pooled connection is given back by each statement
  }

  // ── leases ──

  readLease(runId: string): Promise<LeaseRead> {
    return readPgLease(this, runId);
  }

  swapLease(runId: string, expected: LeaseRead, next: LeaseInfo | null): Promise<boolean> {
    return swapPgLease(this, runId, expected, next);
  }

  // ── documents ──

  async putDoc(runId: string, name: string, bytes: Uint8Array): Promise<void> {
    await this.query(
      `WITH parts AS (DELETE FROM ac_docs WHERE run_id = $1 AND name = $2 AND part > 0)
       INSERT INTO ac_docs (run_id, name, part, bytes) VALUES ($1, $2, 0, $3) ON CONFLICT (run_id, name, part) DO UPDATE SET bytes = EXCLUDED.bytes`,
      [runId, name, Buffer.from(bytes)],
    );
  }

  /** The next part: an append writes its bytes only (a log's line), never the document again. */
  async appendDoc(runId: string, name: string, bytes: Uint8Array): Promise<void> {
    await this.query(
      `INSERT INTO ac_docs (run_id, name, part, bytes)
       SELECT $1, $2, coalesce(max(part) + 1, 0), $3 FROM ac_docs WHERE run_id = $1 AND name = $2`,
      [runId, name, Buffer.from(bytes)],
    );
  }

  async getDoc(runId: string, name: string): Promise<Uint8Array | null> {
    const { rows } = await this.query<{ bytes: Buffer }>('SELECT bytes FROM ac_docs WHERE run_id = $1 AND name = $2 ORDER BY part', [
      runId,
      name,
    ]);
    return rows.length === 0 ? null : plainBytes(Buffer.concat(rows.map((row) => row.bytes)));
  }

  async listDocs(runId: string, prefix: string): Promise<string[]> {
    const { rows } = await this.query<{ name: string }>(
      'SELECT name FROM ac_docs WHERE run_id = $1 AND part = 0 AND left(name, char_length($2)) = $2 ORDER BY name COLLATE "C"',
      [runId, prefix],
    );
    return rows.map((row) => row.name);
  }

  async removeDoc(runId: string, name: string): Promise<void> {
    await this.query('DELETE FROM ac_docs WHERE run_id = $1 AND name = $2', [runId, name]);
  }

  // ── listing rows and runs ──

  async writeListing(runId: string, row: NewListingRow): Promise<void> {
    const { rowCount } = await this.query(`UPDATE ac_runs SET ${setListing(2)} WHERE run_id = $1`, [runId, ...listingParams(row)]);
    if (rowCount === 0) throw this.notFound(runId);
  }

  async readListing(runId: string): Promise<ListingRow | null> {
    const { rows } = await this.query<{ listing: string | null }>('SELECT listing FROM ac_runs WHERE run_id = $1', [runId]);
    return parseListing(rows[0]?.listing ?? null);
  }

  listRuns(): Promise<DeviceRun[]> {
    return listPgDeviceRuns(this);
  }

  async runBytes(runId: string): Promise<number> {
    const { rows } = await this.query<{ bytes: number }>(
      `SELECT (r.bytes + coalesce(octet_length(r.listing), 0)
               + coalesce((SELECT sum(octet_length(d.bytes)) FROM ac_docs d WHERE d.run_id = r.run_id), 0))::bigint AS bytes
         FROM ac_runs r WHERE r.run_id = $1`,
      [runId],
    );
    return rows[0]?.bytes ?? 0;
  }

  /** One statement: the run's rows go with it (ON DELETE CASCADE), so it is never half removed. */
  async removeRun(runId: string): Promise<void> {
    await this.query('DELETE FROM ac_runs WHERE run_id = $1', [runId]);
    this.ownLast.delete(runId);
  }

  // ── blobs ──

  async putBlob(hash: string, bytes: Uint8Array): Promise<void> {
    await this.query('INSERT INTO ac_blobs (hash, bytes, put_at) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING', [
      hash,
      Buffer.from(bytes),
      this.clock.now(),
    ]);
  }

  async getBlob(hash: string): Promise<Uint8Array | null> {
    const { rows } = await this.query<{ bytes: Buffer }>('SELECT bytes FROM ac_blobs WHERE hash = $1', [hash]);
    return rows[0] ? plainBytes(rows[0].bytes) : null;
  }

  async missingBlobs(hashes: readonly string[]): Promise<string[]> {
    if (hashes.length === 0) return [];
    const { rows } = await this.query<{ hash: string }>('SELECT hash FROM ac_blobs WHERE hash = ANY($1)', [hashes]);
    const present = new Set(rows.map((row) => row.hash));
    return hashes.filter((hash) => !present.has(hash));
  }

  async listBlobs(): Promise<BlobEntry[]> {
    const { rows } = await this.query<BlobEntry>('SELECT hash, octet_length(bytes) AS size, put_at AS "putAt" FROM ac_blobs ORDER BY hash');
    return rows;
  }

  async removeBlob(hash: string): Promise<void> {
    await this.query('DELETE FROM ac_blobs WHERE hash = $1', [hash]);
  }

  // ── change notices, claims ──

  /** LISTEN on a connection of the watch's own (pg-notify.ts); this object's own notices are dropped. */
  watch(kind: 'appends' | 'leases', listener: (runId: string) => void): DeviceWatch {
    const watch = new PgWatch(this, kind, listener, () => this.watches.delete(watch));
    this.watches.add(watch);
    return watch;
  }

  claimRun(
    workspace: string,
    skip: readonly string[],
    take: (current: LeaseRead) => LeaseInfo | null,
  ): Promise<{ runId: string; lease: LeaseInfo } | null> {
    return claimPgDeviceRun(this, workspace, skip, take);
  }

  async dispose(): Promise<void> {
    for (const watch of [...this.watches]) watch.close();
    await this.pool.end();
  }
}
