import { StoreError, type LeaseInfo, type RunSummary, type VerifyReport } from '../contract';
import { liveLease } from './file-lease';
import type { FileCheckpointStore } from './file-store';
import { errorMessage, joinPath, readdirOrEmpty } from '../fs-port';
import type { JournalScan } from '../journal-format';
import { blobRefs } from '../refs';
import { RUN_ID } from '../run-id';
import { JOURNAL, readDamageFile, readStateFile } from './run-files';

/** Every run of the store, from each one's state file (its journal only when the state file is missing or unreadable). */
export async function listFileRuns(store: FileCheckpointStore): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  for (const name of (await readdirOrEmpty(store.fs, store.runsDir)).sort()) {
    const summary = await summaryOf(store, name);
    if (summary) summaries.push(summary);
  }
  return summaries;
}

async function summaryOf(store: FileCheckpointStore, runId: string): Promise<RunSummary | null> {
  if (!RUN_ID.test(runId)) return null;
  const dir = store.runDir(runId);
  const journal = joinPath(dir, JOURNAL);
  const stat = await store.fs.stat(journal);
  if (!stat) return null;
  const live = await liveLease(store.leaseContext(runId), store.abandoned);
  const leased = live !== null;
  const { pid, hostname, startTime } = store.me;
  const here = (holder: LeaseInfo) => holder.pid === pid && holder.hostname === hostname && holder.startTime === startTime;
  const holder = live !== null && live !== 'unreadable' ? { holder: live, heldHere: here(live) } : {};
  const damage = await readDamageFile(store.fs, dir);
  const state = await readStateFile(store.fs, dir);
  const damaged = damage ? `${damage.file} at byte ${damage.offset}: ${damage.message}` : undefined;
  if (state) {
    const { task, createdAt, status, updatedAt, steps, parent, undoableRestore, instruction } = state;
    // The count is of the journal's end the state file names: a live writer keeps it current when it
    // moves, but one the journal has grown past with no writer left (killed between its writes) is not known.
    const pendingPatches = leased || state.journalBytes === stat.size ? state.pendingPatches : undefined;
    return {
      runId,
      task,
      createdAt,
      status,
      updatedAt,
      steps,
      leased,
      ...holder,
      ...(parent ? { parent } : {}),
      ...(damaged ? { damaged } : {}),
      ...(pendingPatches !== undefined ? { pendingPatches } : {}),
      ...(undoableRestore !== undefined ? { undoableRestore } : {}),
      ...(instruction !== undefined ? { instruction } : {}),
    };
  }
  try {
    // No state file to list it by: its newest snapshot and the journal after it tell the same.
    const { run, status, stepId: steps, latestCheckpoint, firstInstruction } = await store.readResumeState(runId);
    const parent = run.parent && { parent: { runId: run.parent.runId, step: run.parent.step } };
    return {
      runId,
      task: run.task,
      createdAt: run.createdAt,
      status,
      updatedAt: latestCheckpoint?.at ?? run.at,
      steps,
      leased,
      ...holder,
      ...parent,
      ...(firstInstruction !== undefined ? { instruction: firstInstruction } : {}),
    };
  } catch (error) {
    return { runId, task: '', createdAt: 0, status: 'interrupted', updatedAt: 0, steps: 0, leased, damaged: errorMessage(error) };
  }
}

/** Reads every line of a run's journal and checks every blob it names. */
export async function verifyFileRun(store: FileCheckpointStore, runId: string): Promise<VerifyReport> {
  const journal = store.journalPath(runId);
  let scan: JournalScan;
  try {
    scan = await store.scanJournalOf(runId);
  } catch (error) {
    if (error instanceof StoreError && error.code === 'not_found') throw error;
    const message = errorMessage(error);
    return { runId, ok: false, records: 0, damage: { file: journal, offset: 0, message }, missingBlobs: [] };
  }
  const { records } = scan;
  const missing = new Set<string>();
  for (const record of records) for (const hash of blobRefs(record)) if (!(await store.blobs.has(hash))) missing.add(hash);
  const tornTail = scan.tornTail ?? (await readStateFile(store.fs, store.runDir(runId)))?.tornTailCut;
  const report: VerifyReport = {
    runId,
    ok: !scan.damage && missing.size === 0 && records.length > 0,
    records: records.length,
    missingBlobs: [...missing],
    ...(tornTail ? { tornTail: { offset: tornTail.offset, bytes: tornTail.bytes } } : {}),
    ...(scan.damage ? { damage: { file: journal, ...scan.damage } } : {}),
  };
  if (scan.damage) await store.recordDamage(runId, scan.damage);
  return report;
}
