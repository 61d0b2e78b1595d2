import { StoreError, type ForkRequest, type RunSummary } from '../../../core/store/contract';
import { forkRecords, forkSteps } from '../../../core/store/stamp';
import { journalName, linesOf } from './pg-journal';
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
