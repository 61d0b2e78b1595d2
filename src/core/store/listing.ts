import { StoreError, type LeaseInfo, type RunSummary, type VerifyReport } from './contract';
import type { DeviceRun } from './device';
import { errorMessage } from './fs-port';
import type { JournalScan } from './journal-format';
import { liveLease } from './lease-policy';
import { parseDamage } from './listing-row';
import { blobRefs } from './refs';
import type { JournalStore } from './store';

/** Every run of the store, from each one's listing row (its journal only when the row is missing or unreadable). */
export async function listRuns(store: JournalStore): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  for (const run of await store.device.listRuns()) summaries.push(await summaryOf(store, run));
  return summaries;
}

async function summaryOf(store: JournalStore, { runId, journalBytes, listing, lease, damage }: DeviceRun): Promise<RunSummary> {
  const live = liveLease(store.lease, lease);
  const leased = live !== null;
  const { pid, hostname, startTime } = store.settings.process;
  const here = (holder: LeaseInfo) => holder.pid === pid && holder.hostname === hostname && holder.startTime === startTime;
  const holder = live !== null && live !== 'unreadable' ? { holder: live, heldHere: here(live) } : {};
  const note = parseDamage(damage);
  const damaged = note ? `${note.file} at byte ${note.offset}: ${note.message}` : undefined;
  const known = { runId, leased, ...holder, ...(damaged ? { damaged } : {}) };
  if (listing) {
    const { task, createdAt, status, updatedAt, steps, parent, undoableRestore, instruction } = listing;
    // The count is of the journal's end the row names: a live writer keeps it current when it
    // moves, but one the journal has grown past with no writer left (killed between its writes) is not known.
    const pendingPatches = leased || listing.journalBytes === journalBytes ? listing.pendingPatches : undefined;
    return {
      ...known,
      task,
      createdAt,
      status,
      updatedAt,
      steps,
      ...(parent ? { parent } : {}),
      ...(pendingPatches !== undefined ? { pendingPatches } : {}),
      ...(undoableRestore !== undefined ? { undoableRestore } : {}),
      ...(instruction !== undefined ? { instruction } : {}),
    };
  }
  try {
    // No listing row to list it by: its newest snapshot and the journal after it tell the same.
    const { run, status, stepId: steps, latestCheckpoint, firstInstruction } = await store.readResumeState(runId);
    return {
      ...known,
      task: run.task,
      createdAt: run.createdAt,
      status,
      updatedAt: latestCheckpoint?.at ?? run.at,
      steps,
      ...(run.parent ? { parent: { runId: run.parent.runId, step: run.parent.step } } : {}),
      ...(firstInstruction !== undefined ? { instruction: firstInstruction } : {}),
    };
  } catch (error) {
    return { ...known, task: '', createdAt: 0, status: 'interrupted', updatedAt: 0, steps: 0, damaged: damaged ?? errorMessage(error) };
  }
}

/** Reads every line of a run's journal and checks every blob it names. */
export async function verifyRun(store: JournalStore, runId: string): Promise<VerifyReport> {
  const journal = store.device.journalName(runId);
  let scan: JournalScan;
  try {
    scan = await store.scanJournalOf(runId);
  } catch (error) {
    if (error instanceof StoreError && error.code === 'not_found') throw error;
    return { runId, ok: false, records: 0, damage: { file: journal, offset: 0, message: errorMessage(error) }, missingBlobs: [] };
  }
  const { records } = scan;
  const missing = await store.device.missingBlobs([...new Set(records.flatMap(blobRefs))]);
  const tornTail = scan.tornTail ?? (await store.device.readListing(runId))?.tornTailCut;
  const report: VerifyReport = {
    runId,
    ok: !scan.damage && missing.length === 0 && records.length > 0,
    records: records.length,
    missingBlobs: missing,
    ...(tornTail ? { tornTail: { offset: tornTail.offset, bytes: tornTail.bytes } } : {}),
    ...(scan.damage ? { damage: { file: journal, ...scan.damage } } : {}),
  };
  if (scan.damage) await store.recordDamage(runId, scan.damage);
  return report;
}
