import { prunableSnapshots } from '../../../core/store/fork-fold';
import type { Clock, Timers } from '../../../core/ports';
import { StoreError, type LeaseInfo, type RunWriter } from '../../../core/store/contract';
import type { FoldState } from '../../../core/store/fold';
import { blobRefs } from '../../../core/store/refs';
import { encodeSnapshot, resumeStateOf } from '../../../core/store/resume-state';
import { StoreRunWriter, type AppendGroup, type WriterDevice } from '../../../core/store/run-writer';
import { linesOf, type PgOpened } from './pg-journal';
import { leaseNoticeSql, notifySql } from './pg-notify';
import type { PgCheckpointStore } from './pg-store';

/** A lease row as the driver returns it. */
export interface LeaseRow {
  readonly run_id: string;
  readonly holder_id: string | null;
  readonly pid: number;
  readonly hostname: string;
  readonly start_time: string | null;
  readonly acquired_at: number;
  readonly renewed_at: number;
  readonly generation: number;
  readonly fenced: boolean;
}

export function leaseOfRow(row: LeaseRow): LeaseInfo {
  return {
    holderId: row.holder_id ?? '',
    pid: row.pid,
    hostname: row.hostname,
    ...(row.start_time !== null ? { startTime: row.start_time } : {}),
    acquiredAt: row.acquired_at,
    renewedAt: row.renewed_at,
    generation: row.generation,
    ...(row.fenced ? { fenced: true } : {}),
  };
}

/** Snapshots kept per run. */
export const KEEP_SNAPSHOTS = 2;

/** The writer of a run of a PostgreSQL store: the store's one writer over this run's rows. */
export function pgRunWriter(store: PgCheckpointStore, runId: string, holderId: string, lease: LeaseInfo, opened: PgOpened): RunWriter {
  return new StoreRunWriter(new PgWriterDevice(store, runId, holderId), runId, holderId, lease, opened);
}

/**
 * A PostgreSQL store's primitives for one writer. Every append is one transaction that first
 * renews the lease row WHERE holder and generation are still this writer's: a writer whose lease
 * was taken over (it was paused, or cut off from the server past the timeout) matches no row,
 * appends nothing, and stops with lease_lost.
 */
class PgWriterDevice implements WriterDevice {
  readonly clock: Clock;
  readonly timers: Timers | undefined;
  readonly leaseTimeoutMs: number;
  readonly snapshotStepBytes: number;
  readonly stopsOnAnyFailure = true;
  /** The last row this writer appended (a snapshot names its checksum); unknown until it appends. */
  private lastLine: string | undefined;

  constructor(
    private readonly store: PgCheckpointStore,
    private readonly runId: string,
    private readonly holderId: string,
  ) {
    this.clock = store.clock;
    this.timers = store.timers;
    this.leaseTimeoutMs = store.leaseTimeoutMs;
    this.snapshotStepBytes = store.snapshotStepBytes;
  }

  missingBlobs(hashes: readonly string[]): Promise<readonly string[]> {
    return this.store.missingBlobs(hashes);
  }

  async renewLease(lease: LeaseInfo): Promise<LeaseInfo> {
    const now = this.clock.now();
    const renewed = await this.store.query(
      'UPDATE ac_leases SET renewed_at = $4 WHERE run_id = $1 AND holder_id = $2 AND generation = $3 AND NOT fenced',
      [this.runId, this.holderId, lease.generation, now],
    );
    if (renewed.rowCount !== 1) throw this.lostLease(lease);
    return { ...lease, renewedAt: now };
  }

  private lostLease(lease: LeaseInfo): StoreError {
    return new StoreError(
      `this writer lost the lease of run ${this.runId} (generation ${lease.generation} is no longer current: another writer took the run over); nothing was appended`,
      'lease_lost',
    );
  }

  /**
   * One statement, so one round trip and one commit: the lease row is renewed only where holder
   * and generation are still this writer's, and the rows go in only if it was.
   */
  async appendGroup({ records, bytes, now, fold }: AppendGroup, lease: LeaseInfo): Promise<LeaseInfo> {
    const lines = linesOf(records);
    const refs = [...new Set(records.flatMap(blobRefs))];
    const appended = await this.store.query<{ held: number }>(
      `WITH lease AS (
         UPDATE ac_leases SET renewed_at = $4 WHERE run_id = $1 AND holder_id = $2 AND generation = $3 AND NOT fenced RETURNING run_id
       ), rows AS (
         INSERT INTO ac_journal (run_id, seq, line) SELECT $1, s, l FROM unnest($5::integer[], $6::text[]) AS t(s, l)
          WHERE EXISTS (SELECT 1 FROM lease) RETURNING 1
       ), refs AS (
         INSERT INTO ac_blob_refs (run_id, hash) SELECT $1, h FROM unnest($11::text[]) AS h
          WHERE EXISTS (SELECT 1 FROM lease) ON CONFLICT DO NOTHING RETURNING 1
       ), listing AS (
         UPDATE ac_runs SET status = $7, steps = $8, updated_at = $4, last_seq = $9, bytes = bytes + $10, instruction = $13
          WHERE run_id = $1 AND EXISTS (SELECT 1 FROM lease) RETURNING 1
       ), note AS (
         SELECT ${notifySql('$1', '$12')} FROM lease
       ) SELECT (SELECT count(*) FROM lease)::integer AS held, (SELECT count(*) FROM note)::integer AS told`,
      [
        ...[this.runId, this.holderId, lease.generation, now],
        ...[records.map((r) => r.seq), lines, fold.status, fold.stepId, records.at(-1)!.seq, bytes.length, refs, this.store.token],
        fold.firstInstruction ?? null,
      ],
    );
    if (appended.rows[0]?.held !== 1) throw this.lostLease(lease);
    this.lastLine = lines.at(-1);
    this.store.wrote(this.runId, records.at(-1)!.seq);
    return { ...lease, renewedAt: now };
  }

  async appended(): Promise<void> {
    // the listing row went in with the group
  }

  async reopen(): Promise<FoldState> {
    return (await this.store.openRun(this.runId)).fold;
  }

  /** A snapshot of the run as of its last record. */
  async putSnapshot(fold: FoldState, { journalBytes }: { journalBytes: number }): Promise<number | null> {
    const last = this.lastLine ?? (await this.store.lines(this.runId, fold.lastSeq).catch(() => []))[0];
    if (last === undefined) return null;
    const encoded = new TextDecoder().decode(
      encodeSnapshot({
        journalBytes,
        lastLineStart: journalBytes - Buffer.byteLength(last) - 1,
        lastLineCrc: last.slice(-10, -2),
        state: resumeStateOf(fold),
      }),
    );
    await this.store.transaction(async (client) => {
      await client.query('INSERT INTO ac_snapshots (run_id, seq, snapshot) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        this.runId,
        fold.lastSeq,
        encoded.slice(0, -1),
      ]);
      // The newest two stay, and the newest of each older span of records (a fork opens from its parent's newest one before its step).
      const { rows } = await client.query<{ seq: number }>('SELECT seq FROM ac_snapshots WHERE run_id = $1 ORDER BY seq DESC', [
        this.runId,
      ]);
      const gone = prunableSnapshots(
        rows.map((row) => row.seq),
        KEEP_SNAPSHOTS,
        this.store.forkSpan,
      );
      if (gone.length > 0) await client.query('DELETE FROM ac_snapshots WHERE run_id = $1 AND seq = ANY($2::int[])', [this.runId, gone]);
    });
    return 0;
  }

  async release(lease: LeaseInfo): Promise<void> {
    const release = 'UPDATE ac_leases SET holder_id = NULL WHERE run_id = $1 AND holder_id = $2 AND generation = $3 RETURNING run_id';
    await this.store
      .query(leaseNoticeSql(release, '$4'), [this.runId, this.holderId, lease.generation, this.store.token])
      .catch(() => undefined);
  }

  async cutBack(): Promise<void> {
    // a transaction that failed appended nothing
  }

  /** This process may open the run again at once: the lease it holds is known to be dead. */
  abandon(): void {
    this.store.abandoned.add(this.holderId);
  }

  async closeHandle(): Promise<void> {
    // a pooled connection is given back by each query
  }

  ioError(error: unknown): StoreError {
    return new StoreError(String(error), 'io');
  }
}
