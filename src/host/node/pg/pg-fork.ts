import { StoreError, type ForkRequest, type RunSummary } from '../../../core/store/contract';
import { forkRecords, forkSteps } from '../../../core/store/stamp';
import { foldTail } from '../../../core/store/fold';
import { forkFromParts, type ParentParts } from '../../../core/store/fork-fold';
import type { StoredRecord } from '../../../core/store/records';
import { journalName, linesOf, scanRows, snapshotRows, type PgOpened, type SnapshotRow } from './pg-journal';
import { notifySql } from './pg-notify';
import type { PgCheckpointStore } from './pg-store';

/** A fork: a paused run whose first row stands on `parentId`'s rows up to its last record (read through `lines`). */
export function forkPgRun(store: PgCheckpointStore, parentId: string, fork: ForkRequest): Promise<RunSummary> {
  const now = store.clock.now();
  return store.transaction(async (client) => {
    const { rows } = await client.query<{ task: string; last_seq: number; steps: number; workspace_key: string }>(
      'SELECT task, last_seq, steps, workspace_key FROM ac_runs WHERE run_id = $1 FOR SHARE',
      [parentId],
    );
    const parent = rows[0];
    if (!parent) throw new StoreError(`run ${parentId} not found`, 'not_found', journalName(parentId));
    const stamped = forkRecords(parentId, fork, { seq: parent.last_seq, steps: parent.steps }, now);
    const [line] = linesOf(stamped);
    const inserted = await client.query(
      `INSERT INTO ac_runs (run_id, task, created_at, status, steps, updated_at, last_seq, bytes, workspace_key, parent_run, parent_step, parent_seq)
       VALUES ($1, $2, $3, 'paused', $4, $3, $5, $6, $7, $8, $9, $10) ON CONFLICT (run_id) DO NOTHING`,
      [
        fork.runId,
        parent.task,
        now,
        forkSteps(fork),
        stamped[0]!.seq,
        line!.length + 1,
        parent.workspace_key,
        parentId,
        fork.step,
        parent.last_seq,
      ],
    );
    if (inserted.rowCount === 0) throw new StoreError(`run ${fork.runId} already exists`, 'invalid', journalName(fork.runId));
    await client.query('INSERT INTO ac_journal (run_id, seq, line) VALUES ($1, $2, $3)', [fork.runId, stamped[0]!.seq, line]);
    await client.query('INSERT INTO ac_leases (run_id) VALUES ($1)', [fork.runId]);
    await client.query(`SELECT ${notifySql('$1', '$2')}`, [fork.runId, store.token]);
    store.wrote(fork.runId, stamped[0]!.seq);
    return {
      runId: fork.runId,
      task: parent.task,
      createdAt: now,
      status: 'paused' as const,
      updatedAt: now,
      steps: forkSteps(fork),
      parent: { runId: parentId, step: fork.step },
      leased: false,
    };
  });
}

/** A snapshot's step, read by the server from its JSON (to pick one among many without sending them). */
const STEP_OF = `(snapshot::jsonb #>> '{state,stepId}')::int`;

/**
 * A fork's state without reading its parent whole: the parent's newest snapshot before the fork's
 * step with the rows after it up to that step, its snapshot at the point the fork stands on with the
 * rows up to it, then the fork's own rows (forkFromParts). null when that does not hold: the caller
 * reads the parent whole, which says why.
 */
export async function openPgForkFromParent(store: PgCheckpointStore, runId: string): Promise<PgOpened | null> {
  // Only a fork's first row is a `fork` record: any other run is left to the whole read at once.
  const head = await store.query<{ seq: number; line: string }>('SELECT seq, line FROM ac_journal WHERE run_id = $1 ORDER BY seq LIMIT 1', [
    runId,
  ]);
  const first = head.rows[0];
  if (!first || !first.line.includes('"type":"fork"')) return null;
  const own = await store.query<{ line: string }>('SELECT line FROM ac_journal WHERE run_id = $1 ORDER BY seq', [runId]);
  const scan = await scanRows(
    runId,
    own.rows.map((row) => row.line),
    { firstSeq: first.seq },
  );
  const fork = scan.records[0];
  if (scan.damage || fork?.type !== 'fork' || fork.runId !== runId) return null;
  const parts = await parentParts(store, fork);
  const state = parts && forkFromParts(fork, parts);
  if (!state || !(await foldTail(state, scan.records.slice(1)))) return null;
  return { fold: state, lastSeq: state.lastSeq, journalBytes: scan.goodLength, snapshotAt: scan.goodLength };
}

/** The two states of the parent a fork is folded from; null when its snapshots do not give them. */
async function parentParts(store: PgCheckpointStore, fork: Extract<StoredRecord, { type: 'fork' }>): Promise<ParentParts | null> {
  const { runId, seq, step } = fork.parent;
  const seqs = (
    await store.query<{ seq: number }>('SELECT seq FROM ac_snapshots WHERE run_id = $1 AND seq <= $2 ORDER BY seq DESC', [runId, seq])
  ).rows.map((row) => row.seq);
  const stepAt = async (at: number) =>
    (await store.query<{ step: number | null }>(`SELECT ${STEP_OF} AS step FROM ac_snapshots WHERE run_id = $1 AND seq = $2`, [runId, at]))
      .rows[0]?.step ?? null;
  // The newest snapshot before the step before the fork's, by halves (a run's snapshot steps grow with their seq; the fold checks).
  let [low, high] = [0, seqs.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    const at = await stepAt(seqs[mid]!);
    if (at !== null && at < step - 1) high = mid;
    else low = mid + 1;
  }
  if (low >= seqs.length) return null;
  // Its rows after it are read up to the nearest newer snapshot past the fork's step, else up to the point the fork stands on.
  let until = seq;
  for (let i = low - 1; i >= 0; i--) {
    const at = await stepAt(seqs[i]!);
    if (at !== null && at > step) {
      until = seqs[i]!;
      break;
    }
  }
  const rowAt = async (at: number) =>
    (await store.query<SnapshotRow>('SELECT seq, snapshot FROM ac_snapshots WHERE run_id = $1 AND seq = $2', [runId, at])).rows[0];
  const rows = async (from: number, to: number) =>
    (
      await store.query<{ line: string }>('SELECT line FROM ac_journal WHERE run_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq', [
        runId,
        from,
        to,
      ])
    ).rows.map((row) => row.line);
  const [endRow, beforeRow] = [await rowAt(seqs[0]!), await rowAt(seqs[low]!)];
  if (!endRow || !beforeRow) return null;
  const end = await snapshotRows(runId, endRow, await rows(endRow.seq, seq));
  if (!end || !(await foldTail(end.fold, end.scan.records)) || end.fold.lastSeq !== seq) return null;
  const before = await snapshotRows(runId, beforeRow, await rows(beforeRow.seq, until));
  return before && { before: before.fold, after: before.scan.records, end: end.fold };
}
