import { prunableSnapshots } from '../../../core/store/fork-fold';
import { StoreError, type LeaseInfo, type RunWriter } from '../../../core/store/contract';
import { BranchNeedsRecords, foldFromResumeState, foldRecord, type FoldState } from '../../../core/store/fold';
import { renewIntervalMs } from '../../../core/store/lease-policy';
import type { NewRecord, StoredRecord } from '../../../core/store/records';
import { blobRefs } from '../../../core/store/refs';
import { encodeSnapshot, resumeStateOf, type ResumeState } from '../../../core/store/resume-state';
import { stampRecords } from '../../../core/store/stamp';
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

/** A writer that closes writes a snapshot when the journal after the newest one holds at least this much. */
const CLOSE_SNAPSHOT_BYTES = 64 << 10;
/** Snapshots kept per run. */
export const KEEP_SNAPSHOTS = 2;

/**
 * Appends commit groups of one run while it holds the run's lease. Every append is one
 * transaction that first renews the lease row WHERE holder and generation are still this
 * writer's: a writer whose lease was taken over (it was paused, or cut off from the server past
 * the timeout) matches no row, appends nothing, and stops with lease_lost.
 */
export class PgRunWriter implements RunWriter {
  readonly resumeState: ResumeState;
  private fold: FoldState;
  private lastSeq: number;
  private journalBytes: number;
  private snapshotAt: number;
  /** The last row this writer appended (a snapshot names its checksum); unknown until it appends. */
  private lastLine: string | undefined;
  private stopped: StoreError | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private heartbeat: { stop(): void } | undefined;

  constructor(
    private readonly store: PgCheckpointStore,
    readonly runId: string,
    readonly holderId: string,
    private lease: LeaseInfo,
    opened: PgOpened,
  ) {
    this.resumeState = resumeStateOf(opened.fold);
    this.fold = foldFromResumeState(this.resumeState);
    this.lastSeq = opened.lastSeq;
    this.journalBytes = opened.journalBytes;
    this.snapshotAt = opened.snapshotAt;
    this.heartbeat = store.timers?.every(renewIntervalMs(store.leaseTimeoutMs), () => this.renewLease().catch(() => undefined));
  }

  append(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    return this.serialised(() => this.appendNow(records));
  }

  renewLease(): Promise<void> {
    return this.serialised(async () => {
      if (this.stopped) throw this.stopped;
      await this.guard(() => this.renew());
    });
  }

  close(): Promise<void> {
    return this.serialised(async () => {
      if (this.stopped) return;
      this.stop(new StoreError('this writer is closed', 'lease_lost'));
      if (this.journalBytes - this.snapshotAt >= CLOSE_SNAPSHOT_BYTES) await this.snapshot();
      const release = 'UPDATE ac_leases SET holder_id = NULL WHERE run_id = $1 AND holder_id = $2 AND generation = $3 RETURNING run_id';
      await this.store
        .query(leaseNoticeSql(release, '$4'), [this.runId, this.holderId, this.lease.generation, this.store.token])
        .catch(() => undefined);
    });
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Renews the lease row if it is still this writer's; else lease_lost. */
  private async renew(): Promise<void> {
    const now = this.store.clock.now();
    const renewed = await this.store.query(
      'UPDATE ac_leases SET renewed_at = $4 WHERE run_id = $1 AND holder_id = $2 AND generation = $3 AND NOT fenced',
      [this.runId, this.holderId, this.lease.generation, now],
    );
    if (renewed.rowCount !== 1) throw this.lostLease();
    this.lease = { ...this.lease, renewedAt: now };
  }

  private lostLease(): StoreError {
    return new StoreError(
      `this writer lost the lease of run ${this.runId} (generation ${this.lease.generation} is no longer current: another writer took the run over); nothing was appended`,
      'lease_lost',
    );
  }

  private async appendNow(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    if (this.stopped) throw this.stopped;
    if (records.length === 0) return [];
    const now = this.store.clock.now();
    const stamped = stampRecords(records, this.lastSeq + 1, now);
    const lines = linesOf(stamped);
    const refs = [...new Set(stamped.flatMap(blobRefs))];
    const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
    if (refs.length > 0) {
      const missing = await this.guard(() => this.store.missingBlobs(refs));
      if (missing.length > 0) throw new StoreError(`record names blob ${missing[0]} that is not in the store`, 'invalid');
    }
    const rereadAfter = this.track(stamped);
    // One statement, so one round trip and one commit: the lease row is renewed only where holder
    // and generation are still this writer's, and the rows go in only if it was.
    const appended = await this.guard(() =>
      this.store.query<{ held: number }>(
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
          ...[this.runId, this.holderId, this.lease.generation, now],
          ...[
            stamped.map((r) => r.seq),
            lines,
            this.fold.status,
            this.fold.stepId,
            stamped.at(-1)!.seq,
            bytes,
            refs,
            this.store.token,
            this.fold.firstInstruction ?? null,
          ],
        ],
      ),
    );
    if (appended.rows[0]?.held !== 1) {
      const lost = this.lostLease();
      this.stop(lost);
      throw lost;
    }
    this.lease = { ...this.lease, renewedAt: now };
    this.lastSeq = stamped.at(-1)!.seq;
    this.lastLine = lines.at(-1);
    this.store.wrote(this.runId, this.lastSeq);
    this.journalBytes += bytes;
    if (rereadAfter) this.fold = (await this.store.openRun(this.runId)).fold;
    const compacted = stamped.some((record) => record.type === 'compaction');
    if (compacted || this.journalBytes - this.snapshotAt >= this.store.snapshotStepBytes) await this.snapshot();
    return stamped;
  }

  /** Folds appended records in; true when a branch needs the whole journal (read once the group is committed). */
  private track(records: readonly StoredRecord[]): boolean {
    try {
      for (const record of records) foldRecord(this.fold, record);
      return false;
    } catch (error) {
      if (error instanceof BranchNeedsRecords) return true;
      throw error;
    }
  }

  /** A snapshot of the run as of its last record; a failure only leaves the older ones (the journal stays the truth). */
  private async snapshot(): Promise<void> {
    const last = this.lastLine ?? (await this.store.lines(this.runId, this.lastSeq).catch(() => []))[0];
    if (last === undefined) return;
    const encoded = new TextDecoder().decode(
      encodeSnapshot({
        journalBytes: this.journalBytes,
        lastLineStart: this.journalBytes - Buffer.byteLength(last) - 1,
        lastLineCrc: last.slice(-10, -2),
        state: resumeStateOf(this.fold),
      }),
    );
    try {
      await this.store.transaction(async (client) => {
        await client.query('INSERT INTO ac_snapshots (run_id, seq, snapshot) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
          this.runId,
          this.lastSeq,
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
      this.snapshotAt = this.journalBytes;
    } catch {
      // the next one is tried after the next step of journal
    }
  }

  /** Runs one step; a lost lease or a failed server stops the writer (an append's outcome is then read back on reopen). */
  private async guard<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof StoreError && error.code === 'invalid') throw error;
      const failure = error instanceof StoreError ? error : new StoreError(String(error), 'io');
      this.stop(failure);
      // This process may open the run again at once: the lease it holds is known to be dead.
      if (failure.code !== 'lease_lost') this.store.abandoned.add(this.holderId);
      throw failure;
    }
  }

  private stop(error: StoreError): void {
    if (!this.stopped) this.stopped = error;
    this.heartbeat?.stop();
    this.heartbeat = undefined;
  }
}
