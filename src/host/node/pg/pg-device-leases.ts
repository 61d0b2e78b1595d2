import { DAMAGE_DOC, type DeviceRun, type LeaseRead } from '../../../core/store/device';
import type { LeaseInfo } from '../../../core/store/lease-policy';
import type { PgJournalDevice } from './pg-device';
import { parseListing } from './pg-device-rows';
import { leaseNoticeSql } from './pg-notify';

// The leases of the PostgreSQL journal device, compared and set in one statement each, the runs
// it lists (one query) and the runs it hands to workers (claimRun).

/** A lease row as the driver returns it. */
interface LeaseRow {
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

/** The lease a row holds: none when there is no row or no holder (with the generation it had). */
function leaseReadOf(row: LeaseRow | undefined): LeaseRead {
  if (!row) return { kind: 'none' };
  if (row.holder_id === null) return { kind: 'none', generation: row.generation };
  const lease: LeaseInfo = {
    holderId: row.holder_id,
    pid: row.pid,
    hostname: row.hostname,
    ...(row.start_time !== null ? { startTime: row.start_time } : {}),
    acquiredAt: row.acquired_at,
    renewedAt: row.renewed_at,
    generation: row.generation,
    ...(row.fenced ? { fenced: true } : {}),
  };
  return { kind: 'held', lease };
}

/** ac_leases's columns from holder_id on, in leaseParams's order. */
const COLUMNS = ['holder_id', 'pid', 'hostname', 'start_time', 'acquired_at', 'renewed_at', 'generation', 'fenced'];
export const LEASE_COLUMNS = COLUMNS.join(', ');
/** Those columns set to $2..$9, or to the row an upsert would have inserted. */
const SET_LEASE = COLUMNS.map((column, i) => `${column} = $${i + 2}`).join(', ');
const SET_EXCLUDED = COLUMNS.map((column) => `${column} = EXCLUDED.${column}`).join(', ');

/** A lease as the values of LEASE_COLUMNS (null: no holder). */
export function leaseParams(lease: LeaseInfo | null): unknown[] {
  if (!lease) return [null, 0, '', null, 0, 0, 0, false];
  const { holderId, pid, hostname, startTime, acquiredAt, renewedAt, generation, fenced } = lease;
  return [holderId, pid, hostname, startTime ?? null, acquiredAt, renewedAt, generation, fenced === true];
}

export async function readPgLease(device: PgJournalDevice, runId: string): Promise<LeaseRead> {
  device.journalName(runId);
  const { rows } = await device.query<LeaseRow>('SELECT * FROM ac_leases WHERE run_id = $1', [runId]);
  return leaseReadOf(rows[0]);
}

/**
 * Sets the lease to `next` if it is still as `expected` was read. A change other than a renewal
 * (the same holder, generation and fence) sends its lease notice in the same statement.
 */
export async function swapPgLease(device: PgJournalDevice, runId: string, expected: LeaseRead, next: LeaseInfo | null): Promise<boolean> {
  device.journalName(runId);
  if (expected.kind === 'held') {
    const was = expected.lease;
    const renewal = next !== null && next.holderId === was.holderId && next.generation === was.generation && !!next.fenced === !!was.fenced;
    const [set, params] = next ? [SET_LEASE, [runId, ...leaseParams(next)]] : ['holder_id = NULL, fenced = false', [runId]];
    const n = params.length;
    const update = `UPDATE ac_leases SET ${set} WHERE run_id = $1 AND holder_id = $${n + 1} AND generation = $${n + 2} AND fenced = $${n + 3} RETURNING run_id`;
    const compared = [...params, was.holderId, was.generation, was.fenced === true];
    const [sql, values] = renewal ? [update, compared] : [leaseNoticeSql(update, `$${n + 4}`), [...compared, device.token]];
    return (await device.query(sql, values)).rows.length === 1;
  }
  // Read as none (or unreadable, which a row never is): it is as read while nobody (or `next`'s holder) holds it.
  if (!next) return (await readPgLease(device, runId)).kind === 'none';
  const generation = expected.kind === 'none' ? expected.generation : undefined;
  let free = expected.kind === 'unreadable' ? '(l.holder_id IS NULL OR l.holder_id = $2)' : 'l.holder_id IS NULL';
  if (generation !== undefined) free += ' AND l.generation = $10';
  const upsert = `INSERT INTO ac_leases AS l (run_id, ${LEASE_COLUMNS})
      SELECT run_id, $2, $3, $4, $5, $6, $7, $8, $9 FROM ac_runs WHERE run_id = $1
      ON CONFLICT (run_id) DO UPDATE SET ${SET_EXCLUDED}
      WHERE ${free} RETURNING l.run_id`;
  const params = [runId, ...leaseParams(next), ...(generation === undefined ? [] : [generation])];
  const { rows } = await device.query(leaseNoticeSql(upsert, `$${params.length + 1}`), [...params, device.token]);
  if (rows.length === 1) return true;
  if ((await device.journalSize(runId)) === null) throw device.notFound(runId);
  return false;
}

/** Every run in run id order (code unit order, as the file device sorts), with its journal's end, listing, lease and damage note: one query. */
export async function listPgDeviceRuns(device: PgJournalDevice): Promise<DeviceRun[]> {
  const { rows } = await device.query<Partial<LeaseRow> & { id: string; bytes: number; listing: string | null; damage: Buffer | null }>(
    `SELECT r.run_id AS id, r.bytes, r.listing, d.bytes AS damage, l.*
       FROM ac_runs r LEFT JOIN ac_leases l ON l.run_id = r.run_id LEFT JOIN ac_docs d ON d.run_id = r.run_id AND d.name = $1 AND d.part = 0
      ORDER BY r.run_id COLLATE "C"`,
    [DAMAGE_DOC],
  );
  return rows.map((row) => ({
    runId: row.id,
    journalBytes: row.bytes,
    listing: parseListing(row.listing),
    lease: leaseReadOf(row.run_id === null || row.run_id === undefined ? undefined : (row as LeaseRow)),
    damage: row.damage === null ? null : new Uint8Array(row.damage),
  }));
}

/**
 * Takes the lease of one run of `workspace` that is running or interrupted, has no damage note
 * and is not in `skip`, whose lease `take` turns into a new one. Candidates are locked with SKIP
 * LOCKED, so workers claiming at once neither wait on each other nor take the same run; the
 * lease is set in the same transaction, with its notice.
 */
export function claimPgDeviceRun(
  device: PgJournalDevice,
  workspace: string,
  skip: readonly string[],
  take: (current: LeaseRead) => LeaseInfo | null,
): Promise<{ runId: string; lease: LeaseInfo } | null> {
  return device.transaction(async (query) => {
    const { rows } = await query<LeaseRow>(
      `SELECT l.* FROM ac_leases l JOIN ac_runs r ON r.run_id = l.run_id
        WHERE r.workspace_key = $1 AND r.status IN ('running', 'interrupted') AND NOT (r.run_id = ANY($2))
          AND NOT EXISTS (SELECT 1 FROM ac_docs d WHERE d.run_id = r.run_id AND d.name = $3)
        ORDER BY r.updated_at FOR UPDATE OF l SKIP LOCKED LIMIT 32`,
      [workspace, skip, DAMAGE_DOC],
    );
    // Each row is locked by this transaction: it is as read.
    const update = leaseNoticeSql(`UPDATE ac_leases SET ${SET_LEASE} WHERE run_id = $1 RETURNING run_id`, '$10');
    for (const row of rows) {
      const lease = take(leaseReadOf(row));
      if (!lease) continue;
      await query(update, [row.run_id, ...leaseParams(lease), device.token]);
      return { runId: row.run_id, lease };
    }
    return null;
  });
}
