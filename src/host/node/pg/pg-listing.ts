import type { GcResult, RunSummary } from '../../../core/store/contract';
import { isLeaseStale } from '../../../core/store/lease-policy';
import { planRetention, type RetentionPolicy } from '../../../core/store/retention';
import type { PgCheckpointStore } from './pg-store';
import { leaseOfRow, type LeaseRow } from './pg-writer';

/** Every run from the listing table and its lease row: no journal is read. */
export async function listPgRuns(store: PgCheckpointStore): Promise<readonly RunSummary[]> {
  const { rows } = await store.query<
    LeaseRow & {
      task: string;
      created_at: number;
      status: RunSummary['status'];
      steps: number;
      updated_at: number;
      damaged: string | null;
      parent_run: string | null;
      parent_step: number | null;
      instruction: string | null;
    }
  >(
    `SELECT r.run_id, r.task, r.created_at, r.status, r.steps, r.updated_at, r.damaged, r.parent_run, r.parent_step, r.instruction,
            l.holder_id, l.pid, l.hostname, l.start_time, l.acquired_at, l.renewed_at, l.generation, l.fenced
       FROM ac_runs r LEFT JOIN ac_leases l USING (run_id) ORDER BY r.run_id`,
  );
  const now = store.clock.now();
  const { pid, hostname, startTime } = store.me;
  return rows.map((row) => {
    const lease = row.holder_id !== null ? leaseOfRow(row) : null;
    const leased = lease !== null && !isLeaseStale(lease, now, store.leaseTimeoutMs, store.me);
    const here = lease !== null && lease.pid === pid && lease.hostname === hostname && lease.startTime === startTime;
    return {
      runId: row.run_id,
      task: row.task,
      createdAt: row.created_at,
      status: row.status,
      updatedAt: row.updated_at,
      steps: row.steps,
      leased,
      ...(leased && lease ? { holder: lease, heldHere: here } : {}),
      ...(row.damaged !== null ? { damaged: row.damaged } : {}),
      ...(row.parent_run !== null && row.parent_step !== null ? { parent: { runId: row.parent_run, step: row.parent_step } } : {}),
      ...(row.instruction !== null ? { instruction: row.instruction } : {}),
    };
  });
}

/** Retention over the listing table (live, damaged and forked-from runs are kept), then blobs no run names, past their grace. */
export async function collectPgGarbage(store: PgCheckpointStore, policy: RetentionPolicy): Promise<GcResult> {
  const now = store.clock.now();
  const runs = await store.query<
    LeaseRow & {
      status: RunSummary['status'];
      updated_at: number;
      bytes: number;
      blob_refs: string[];
      damaged: string | null;
      parent_run: string | null;
    }
  >(
    `SELECT r.run_id, r.status, r.updated_at, r.bytes, r.damaged, r.parent_run,
            ARRAY(SELECT b.hash FROM ac_blob_refs b WHERE b.run_id = r.run_id) AS blob_refs,
            l.holder_id, l.pid, l.hostname, l.start_time, l.acquired_at, l.renewed_at, l.generation, l.fenced
       FROM ac_runs r LEFT JOIN ac_leases l USING (run_id)`,
  );
  const live = (row: LeaseRow) => row.holder_id !== null && !isLeaseStale(leaseOfRow(row), now, store.leaseTimeoutMs, store.me);
  // A run a fork stands on stays while the fork does (its rows are the fork's history).
  const parents = new Set(runs.rows.map((row) => row.parent_run).filter((id) => id !== null));
  const usage = runs.rows.map((row) => ({
    runId: row.run_id,
    status: row.status,
    updatedAt: row.updated_at,
    bytes: row.bytes,
    protected: live(row) || row.damaged !== null || parents.has(row.run_id),
    blobs: new Set(row.blob_refs),
  }));
  const sizes = await store.query<{ hash: string; size: number }>('SELECT hash, octet_length(bytes) AS size FROM ac_blobs');
  const planned = planRetention(usage, new Map(sizes.rows.map((r) => [r.hash, r.size])), policy);
  const removed = await removeRuns(store, planned, now);
  const freedRuns = usage.filter((u) => removed.includes(u.runId)).reduce((sum, u) => sum + u.bytes, 0);
  const blobs = await store.query<{ size: number }>(
    `DELETE FROM ac_blobs b WHERE b.put_at < $1 AND NOT EXISTS (SELECT 1 FROM ac_blob_refs r WHERE r.hash = b.hash)
     RETURNING octet_length(b.bytes) AS size`,
    [now - store.blobGraceMs],
  );
  const freedBlobs = blobs.rows.reduce((sum, r) => sum + r.size, 0);
  return { removedRuns: removed, removedBlobs: blobs.rows.length, freedBytes: freedRuns + freedBlobs };
}

/** Deletes the planned runs whose lease is still free or stale when the delete runs (a writer may have opened one since). */
function removeRuns(store: PgCheckpointStore, planned: readonly string[], now: number): Promise<string[]> {
  if (planned.length === 0) return Promise.resolve([]);
  return store.transaction(async (client) => {
    const { rows } = await client.query<LeaseRow>('SELECT * FROM ac_leases WHERE run_id = ANY($1) FOR UPDATE', [planned]);
    const free = rows.filter((row) => row.holder_id === null || isLeaseStale(leaseOfRow(row), now, store.leaseTimeoutMs, store.me));
    const ids = free.map((row) => row.run_id);
    if (ids.length > 0) await client.query('DELETE FROM ac_runs WHERE run_id = ANY($1)', [ids]);
    return ids;
  });
}
