import type pg from 'pg';
import { StoreError, type LeaseInfo } from '../../../core/store/contract';
import { describeHolder, isLeaseStale, newHolderId } from '../../../core/store/lease-policy';
import { journalName } from './pg-journal';
import type { PgCheckpointStore } from './pg-store';
import { leaseOfRow, type LeaseRow } from './pg-writer';
import { leaseNoticeSql } from './pg-notify';

/** A run claimed for a worker: the lease it holds, for the next openWriter of the run. */
export interface PgClaim {
  readonly runId: string;
  readonly holderId: string;
  readonly lease: LeaseInfo;
}

/**
 * Takes the lease of a run whose holder is gone (or none): a new holder and the next generation.
 * Two statements and no transaction: the row is read, judged, and then taken only if it is still
 * as read (holder, generation and heartbeat), so a renewal or another taker in between wins.
 */
export async function takeLease(store: PgCheckpointStore, runId: string, holderId: string): Promise<LeaseInfo> {
  const { rows } = await store.query<LeaseRow>('SELECT * FROM ac_leases WHERE run_id = $1', [runId]);
  const row = rows[0];
  if (!row) throw new StoreError(`run ${runId} not found`, 'not_found', journalName(runId));
  const now = store.clock.now();
  const held = () =>
    new StoreError(`run ${runId} is being written by another process (${describeHolder(leaseOfRow(row), now)})`, 'lease_held');
  if (!isFree(store, row, now)) throw held();
  const taken = await holdLease(store, row, holderId, now);
  if (!taken) throw held();
  return taken;
}

/**
 * Claims one run a worker of `workspace` may go on with: running or interrupted (a queued run
 * is one that has only its first save point), not damaged, its lease free or its holder gone.
 * Candidates are locked with SKIP LOCKED, so workers claiming at once never wait on each other
 * or take the same run.
 */
export function claimPgRun(store: PgCheckpointStore, workspace: string, skip: readonly string[]): Promise<PgClaim | null> {
  const holderId = newHolderId();
  return store.transaction(async (client) => {
    const { rows } = await client.query<LeaseRow>(
      `SELECT l.* FROM ac_leases l JOIN ac_runs r USING (run_id)
        WHERE r.workspace_key = $1 AND r.status IN ('running', 'interrupted') AND r.damaged IS NULL AND NOT (r.run_id = ANY($2))
        ORDER BY r.updated_at FOR UPDATE OF l SKIP LOCKED LIMIT 32`,
      [workspace, skip],
    );
    const now = store.clock.now();
    const free = rows.find((row) => isFree(store, row, now));
    if (!free) return null;
    // The row is locked by this transaction: it is as read.
    const lease = await holdLease(store, free, holderId, now, client);
    return lease ? { runId: free.run_id, holderId, lease } : null;
  });
}

/** A lease nobody holds, whose holder is gone, or whose holder was this process's writer that stopped on a failure. */
function isFree(store: PgCheckpointStore, row: LeaseRow, now: number): boolean {
  if (row.holder_id === null || store.abandoned.has(row.holder_id)) return true;
  return isLeaseStale(leaseOfRow(row), now, store.leaseTimeoutMs, store.me);
}

/**
 * Makes `holderId` (this process) the holder of a lease row, in the next generation, if the row is
 * still as `seen` (holder, generation, heartbeat, fence); null when it changed since.
 */
async function holdLease(
  store: PgCheckpointStore,
  seen: LeaseRow,
  holderId: string,
  now: number,
  client?: pg.PoolClient,
): Promise<LeaseInfo | null> {
  const { me } = store;
  const update = `UPDATE ac_leases SET holder_id = $2, pid = $3, hostname = $4, start_time = $5, acquired_at = $6, renewed_at = $6,
       generation = generation + 1, fenced = false
     WHERE run_id = $1 AND holder_id IS NOT DISTINCT FROM $7 AND generation = $8 AND renewed_at = $9 AND fenced = $10 RETURNING *`;
  const sql = leaseNoticeSql(update, '$11');
  const params = [
    seen.run_id,
    holderId,
    me.pid,
    me.hostname,
    me.startTime ?? null,
    now,
    seen.holder_id,
    seen.generation,
    seen.renewed_at,
    seen.fenced,
    store.token,
  ];
  const { rows } = client ? await client.query<LeaseRow>(sql, params) : await store.query<LeaseRow>(sql, params);
  return rows[0] ? leaseOfRow(rows[0]) : null;
}
