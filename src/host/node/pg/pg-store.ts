import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { redactedAddress, workspaceKey } from './pg-names';
import { sha256Hex } from '../../../core/patches/hash';
import { systemClock, type Clock, type Timers } from '../../../core/ports';
import {
  StoreError,
  type CheckpointStore,
  type GcResult,
  type LeaseInfo,
  type ForkRequest,
  type ReadRunOptions,
  type RunState,
  type RunSummary,
  type RunWriter,
  type VerifyReport,
} from '../../../core/store/contract';
import { runStateOf, startFold } from '../../../core/store/fold';
import { foldInSlices } from '../../../core/store/history';
import { DEFAULT_LEASE_TIMEOUT_MS, newHolderId, unknownProcess, type ProcessIdentity } from '../../../core/store/lease-policy';
import type { RunRecord, StoredRecord } from '../../../core/store/records';
import { blobRefs } from '../../../core/store/refs';
import type { RetentionPolicy } from '../../../core/store/retention';
import { resumeStateOf, type ResumeState } from '../../../core/store/resume-state';
import { RUN_ID } from '../../../core/store/run-id';
import { stampRecords } from '../../../core/store/stamp';
import { claimPgRun, takeLease } from './pg-claims';
import { checkedWhole, journalName, linesOf, openFromSnapshot, openWhole, scanRows, type PgOpened } from './pg-journal';
import { collectPgGarbage, listPgRuns } from './pg-listing';
import { forkPgRun } from './pg-fork';
import { LEASE_CHANNEL, leaseNoticeSql, notifySql, PgAppendWatch } from './pg-notify';
import { migrateSchema } from './pg-schema';
import { KEEP_SNAPSHOTS, leaseOfRow, pgRunWriter, type LeaseRow } from './pg-writer';
import { errorText } from '../../../core/error-text';
// A fork opens from its parent's snapshot rows (pg-fork.ts).
import { openPgForkFromParent } from './pg-fork';

export interface PgStoreOptions {
  /** postgres://user:password@host:port/database (the password never appears in an error). */
  readonly url: string;
  /** A schema of its own (tests; a team sharing one database between projects); default: the user's search_path. */
  readonly schema?: string;
  readonly clock?: Clock;
  readonly timers?: Timers;
  readonly leaseTimeoutMs?: number;
  readonly process?: ProcessIdentity;
  readonly blobGraceMs?: number;
  /** A snapshot is written at each compaction and each time the journal has grown by this much (0: after every append). */
  readonly snapshotStepBytes?: number;
  /** Of the older snapshots, the newest of each span of this many records is kept (FORK_SPAN): a fork opens from its parent's newest one before its step. */
  readonly forkSpan?: number;
  readonly poolSize?: number;
}

/** bigint columns as numbers (every one of ours holds milliseconds, bytes or a generation). */
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text'),
} as pg.CustomTypesConfig;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The CheckpointStore in PostgreSQL: the same records, checksums, snapshots and lease rules as the file store, with fenced appends. */
export class PgCheckpointStore implements CheckpointStore {
  readonly pool: pg.Pool;
  readonly clock: Clock;
  readonly timers: Timers | undefined;
  readonly leaseTimeoutMs: number;
  readonly me: ProcessIdentity;
  readonly blobGraceMs: number;
  readonly snapshotStepBytes: number;
  readonly forkSpan: number | undefined;
  readonly address: string;
  private ready: Promise<void> | undefined;
  /** Runs this store claimed for a worker (claimRun): the next openWriter of one opens it under that lease. */
  private readonly claims = new Map<string, { holderId: string; lease: LeaseInfo }>();
  /** Holders of this process whose writer stopped on a failure (the server went away): their lease may be taken at once. */
  readonly abandoned = new Set<string>();
  /** Names this store object in its change notices, so its own watches skip them. */
  readonly token = randomUUID();
  /** How the pool and a watch's own connection reach the server. */
  readonly clientConfig: pg.ClientConfig;
  /** The last seq this store object wrote per run: a watch that reconnects skips runs written last here. */
  private readonly ownLast = new Map<string, number>();
  private readonly watches = new Set<PgAppendWatch>();

  constructor(options: PgStoreOptions) {
    const { schema } = options;
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) throw new StoreError(`not a schema name: ${JSON.stringify(schema)}`, 'invalid');
    this.address = redactedAddress(options.url);
    this.clientConfig = {
      connectionString: options.url,
      types,
      connectionTimeoutMillis: 10_000,
      ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}),
    };
    this.pool = new pg.Pool({ ...this.clientConfig, max: options.poolSize ?? 4, allowExitOnIdle: true });
    // A connection that drops while idle is replaced; the error must not end the process.
    this.pool.on('error', () => undefined);
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers;
    this.leaseTimeoutMs = options.leaseTimeoutMs ?? DEFAULT_LEASE_TIMEOUT_MS;
    this.me = options.process ?? unknownProcess;
    this.blobGraceMs = options.blobGraceMs ?? 10 * 60_000;
    this.snapshotStepBytes = options.snapshotStepBytes ?? 4 << 20;
    this.forkSpan = options.forkSpan;
  }

  /** Ends the pool's connections (open writers stop appending) and the watches. */
  async dispose(): Promise<void> {
    for (const watch of [...this.watches]) watch.close();
    await this.pool.end();
  }

  /** The change notice (pg-notify.ts): appends of other store objects and processes, by LISTEN/NOTIFY. */
  watchAppends(listener: (runId: string) => void): PgAppendWatch {
    const watch = new PgAppendWatch(this, listener, () => this.watches.delete(watch));
    this.watches.add(watch);
    return watch;
  }

  /** The lease notice (pg-notify.ts): a lease taken, released or fenced by another store object or process; never a heartbeat. */
  watchLeases(listener: (runId: string) => void): PgAppendWatch {
    const watch = new PgAppendWatch(this, listener, () => this.watches.delete(watch), LEASE_CHANNEL);
    this.watches.add(watch);
    return watch;
  }

  /** Notes an append of this store object that committed. */
  wrote(runId: string, lastSeq: number): void {
    this.ownLast.set(runId, lastSeq);
  }

  /** Whether the last append of a run (its last seq) was this store object's. */
  wroteLast(runId: string, lastSeq: number): boolean {
    return this.ownLast.get(runId) === lastSeq;
  }

  /** One query on a pooled connection, the schema brought up to date first. */
  async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    await this.ensureSchema();
    return this.io(() => this.pool.query<R>(sql, params));
  }

  /** `work` in one transaction on one connection; rolled back when it throws. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.ensureSchema();
    const client = await this.io(() => this.pool.connect());
    try {
      await this.io(() => client.query('BEGIN'));
      const result = await work(client);
      await this.io(() => client.query('COMMIT'));
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** A driver or server failure as a StoreError('io') naming the server (never its password). */
  async io<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const message = errorText(error);
      throw new StoreError(`PostgreSQL at ${this.address}: ${message}`, 'io');
    }
  }

  private ensureSchema(): Promise<void> {
    this.ready ??= (async () => {
      const client = await this.io(() => this.pool.connect());
      try {
        await this.io(() => migrateSchema(client));
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private checkId(runId: string): void {
    if (!RUN_ID.test(runId)) throw new StoreError(`not a valid run id: ${JSON.stringify(runId)}`, 'invalid');
  }

  async createRun(run: Omit<RunRecord, 'v' | 'at' | 'type'>): Promise<RunWriter> {
    this.checkId(run.runId);
    const now = this.clock.now();
    const stamped = stampRecords([{ ...run, type: 'run' }], 1, now);
    const [line] = linesOf(stamped);
    const holderId = newHolderId();
    const lease = await this.transaction(async (client) => {
      const inserted = await client.query(
        `INSERT INTO ac_runs (run_id, task, created_at, status, steps, updated_at, last_seq, bytes, workspace_key)
         VALUES ($1, $2, $3, 'running', 0, $4, 1, $5, $6) ON CONFLICT (run_id) DO NOTHING`,
        [run.runId, run.task, run.createdAt, now, line!.length + 1, workspaceKey(run)],
      );
      if (inserted.rowCount === 0) throw new StoreError(`run ${run.runId} already exists`, 'invalid', journalName(run.runId));
      await client.query('INSERT INTO ac_journal (run_id, seq, line) VALUES ($1, 1, $2)', [run.runId, line]);
      await client.query(`SELECT ${notifySql('$1', '$2')}`, [run.runId, this.token]);
      const { rows } = await client.query<LeaseRow>(
        `INSERT INTO ac_leases (run_id, holder_id, pid, hostname, start_time, acquired_at, renewed_at, generation)
         VALUES ($1, $2, $3, $4, $5, $6, $6, 1) RETURNING *`,
        [run.runId, holderId, this.me.pid, this.me.hostname, this.me.startTime ?? null, now],
      );
      return leaseOfRow(rows[0]!);
    });
    this.wrote(run.runId, 1);
    const opened: PgOpened = { fold: startFold(stamped[0]), lastSeq: 1, journalBytes: line!.length + 1, snapshotAt: 0 };
    return pgRunWriter(this, run.runId, holderId, lease, opened);
  }

  async openWriter(runId: string): Promise<RunWriter> {
    this.checkId(runId);
    const claim = this.claims.get(runId);
    this.claims.delete(runId);
    const holderId = claim?.holderId ?? newHolderId();
    const lease = claim?.lease ?? (await takeLease(this, runId, holderId));
    try {
      return pgRunWriter(this, runId, holderId, lease, await this.openRun(runId));
    } catch (error) {
      const release = 'UPDATE ac_leases SET holder_id = NULL WHERE run_id = $1 AND holder_id = $2 RETURNING run_id';
      await this.query(leaseNoticeSql(release, '$3'), [runId, holderId, this.token]).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Claims one run a worker of `workspace` may go on with (pg-claims.ts). The claim is the run's
   * lease: openWriter(runId) then opens it.
   */
  async claimRun(workspace: string, skip: readonly string[] = []): Promise<string | null> {
    const claimed = await claimPgRun(this, workspace, skip);
    if (!claimed) return null;
    this.claims.set(claimed.runId, { holderId: claimed.holderId, lease: claimed.lease });
    return claimed.runId;
  }

  async fenceLease(runId: string): Promise<void> {
    this.checkId(runId);
    const fence = 'UPDATE ac_leases SET fenced = true, generation = generation + 1 WHERE run_id = $1 RETURNING run_id';
    const fenced = await this.query(leaseNoticeSql(fence, '$2'), [runId, this.token]);
    if (fenced.rowCount === 0) throw new StoreError(`run ${runId} not found`, 'not_found');
  }

  /** The run from its newest snapshot that holds and the rows after it, else from its whole journal; damage is recorded in the listing. */
  async openRun(runId: string): Promise<PgOpened> {
    try {
      return await this.openRunOnce(runId);
    } catch (error) {
      if (error instanceof StoreError && error.code === 'damaged')
        await this.query('UPDATE ac_runs SET damaged = $2 WHERE run_id = $1', [runId, error.message]).catch(() => undefined);
      throw error;
    }
  }

  /**
   * The newest snapshot and the rows from its own last record on; an older snapshot is read only
   * when the newer does not hold. A snapshot's rows are its run's own (a fork's snapshots come
   * after its fork record), so no parent is looked up.
   */
  private async openRunOnce(runId: string): Promise<PgOpened> {
    for (let older = 0; older < KEEP_SNAPSHOTS; older++) {
      const { rows } = await this.query<{ seq: number; snapshot: string }>(
        'SELECT seq, snapshot FROM ac_snapshots WHERE run_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2',
        [runId, older],
      );
      const row = rows[0];
      if (!row) break;
      const tail = await this.query<{ line: string }>('SELECT line FROM ac_journal WHERE run_id = $1 AND seq >= $2 ORDER BY seq', [
        runId,
        row.seq,
      ]);
      const opened = await openFromSnapshot(
        runId,
        row,
        tail.rows.map((r) => r.line),
      );
      if (opened) return opened;
    }
    // A fork without a snapshot of its own: from its parent's snapshots, not its parent's whole journal.
    const forked = await openPgForkFromParent(this, runId);
    return forked ?? openWhole(runId, await this.lines(runId));
  }

  /**
   * The journal rows of a run from `fromSeq` to `toSeq`, in order; a fork's begin with the rows of
   * the run it stands on, up to the record it names. not_found when the run does not exist.
   */
  async lines(runId: string, fromSeq = 1, toSeq = 2 ** 31 - 1, depth = 0): Promise<string[]> {
    this.checkId(runId);
    const run = await this.query<{ parent_run: string | null; parent_seq: number | null }>(
      'SELECT parent_run, parent_seq FROM ac_runs WHERE run_id = $1',
      [runId],
    );
    const row = run.rows[0];
    if (!row) throw new StoreError(`run ${runId} not found`, 'not_found', journalName(runId));
    if (depth > 1000) throw new StoreError(`${journalName(runId)}: its forks go round in a circle`, 'damaged', journalName(runId));
    const { parent_run: parent, parent_seq: upTo } = row;
    const inherited =
      parent !== null && upTo !== null && fromSeq <= upTo ? await this.lines(parent, fromSeq, Math.min(upTo, toSeq), depth + 1) : [];
    const { rows } = await this.query<{ line: string }>(
      'SELECT line FROM ac_journal WHERE run_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq',
      [runId, fromSeq, toSeq],
    );
    return [...inherited, ...rows.map((r) => r.line)];
  }

  forkRun(parentId: string, fork: ForkRequest): Promise<RunSummary> {
    this.checkId(parentId);
    this.checkId(fork.runId);
    return forkPgRun(this, parentId, fork);
  }

  async readResumeState(runId: string): Promise<ResumeState> {
    return resumeStateOf((await this.openRun(runId)).fold);
  }

  async readRun(runId: string, options?: ReadRunOptions): Promise<RunState> {
    const scan = await scanRows(runId, await this.lines(runId));
    if (!options?.intactPart || !scan.damage || scan.records.length === 0)
      return runStateOf(await foldInSlices(checkedWhole(runId, scan).records, options));
    const state = runStateOf(await foldInSlices(scan.records, options));
    return { ...state, damage: { file: journalName(runId), ...scan.damage } };
  }

  async readRecords(runId: string): Promise<readonly StoredRecord[]> {
    return checkedWhole(runId, await scanRows(runId, await this.lines(runId))).records;
  }

  listRuns(): Promise<readonly RunSummary[]> {
    return listPgRuns(this);
  }

  async putBlob(bytes: Uint8Array): Promise<string> {
    const hash = sha256Hex(bytes);
    await this.query('INSERT INTO ac_blobs (hash, bytes, put_at) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING', [
      hash,
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      this.clock.now(),
    ]);
    return hash;
  }

  async getBlob(hash: string): Promise<Uint8Array> {
    const { rows } = await this.query<{ bytes: Buffer }>('SELECT bytes FROM ac_blobs WHERE hash = $1', [hash]);
    const bytes = rows[0]?.bytes;
    if (!bytes) throw new StoreError(`blob ${hash} not found`, 'not_found');
    const copy = new Uint8Array(bytes);
    if (sha256Hex(copy) !== hash) throw new StoreError(`blob ${hash} does not match its hash`, 'damaged');
    return copy;
  }

  /** Which of `hashes` the store lacks. */
  async missingBlobs(hashes: readonly string[], client?: pg.PoolClient): Promise<string[]> {
    if (hashes.length === 0) return [];
    const sql = 'SELECT hash FROM ac_blobs WHERE hash = ANY($1)';
    const { rows } = client ? await client.query<{ hash: string }>(sql, [hashes]) : await this.query<{ hash: string }>(sql, [hashes]);
    const present = new Set(rows.map((r) => r.hash));
    return hashes.filter((h) => !present.has(h));
  }

  async verify(runId: string): Promise<VerifyReport> {
    const scan = await scanRows(runId, await this.lines(runId));
    const missing = await this.missingBlobs([...new Set(scan.records.flatMap(blobRefs))]);
    if (scan.damage) await this.query('UPDATE ac_runs SET damaged = $2 WHERE run_id = $1', [runId, scan.damage.message]);
    return {
      runId,
      ok: !scan.damage && missing.length === 0 && scan.records.length > 0,
      records: scan.records.length,
      missingBlobs: missing,
      ...(scan.damage ? { damage: { file: journalName(runId), ...scan.damage } } : {}),
    };
  }

  collectGarbage(policy: RetentionPolicy): Promise<GcResult> {
    return collectPgGarbage(this, policy);
  }
}
