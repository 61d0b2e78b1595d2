import { liveExec } from '../patches/exec-bit';
import { ABSENT } from '../patches/hash';
import type { NewRecord, RestoreRecord, StoredRecord } from '../store/records';
import { undoSessionRestore } from './session';
import type { FileWork } from './plan';
import { restoreDone, restoreRecord, restoreRecordToNew, writeFiles, type FileFailure } from './rollback';
import type { RestoreDeps } from './types';

export interface UndoResult {
  /** The `undo` restore record, appended before any write; absent when no file could be undone. */
  readonly restore?: RestoreRecord;
  readonly written: readonly string[];
  /** Files the user changed since the restore: left alone. */
  readonly conflicts: readonly FileFailure[];
}

async function bytesOf(deps: RestoreDeps, hash: string, blob: string | undefined): Promise<Uint8Array | null> {
  if (hash === ABSENT) return null;
  if (blob === undefined) throw new Error(`restore record has no blob for content ${hash.slice(0, 12)}`);
  return deps.blobs.getBlob(blob);
}

/** Whether the file's executable bit is still the one the restore left (true when it set none, or the host has no modes). */
async function sameBit(deps: RestoreDeps, file: RestoreRecord['files'][number]): Promise<boolean> {
  if (file.writtenExec === undefined) return true;
  const live = await liveExec(deps.workspace, file.path);
  return live === undefined || live === null || live === file.writtenExec;
}

/** What an undo did, in words for the person: the files brought back and those left alone, never an id. */
export function undoSummary(result: UndoResult | undefined): string {
  if (!result) return 'nothing to undo in this run';
  const changed = result.conflicts.map((c) => c.path);
  const left = changed.length === 1 ? 'it is' : 'they are';
  if (result.written.length === 0)
    return changed.length > 0
      ? `nothing to undo: ${changed.join(', ')} changed since the restore (left as ${left})`
      : 'nothing to undo: the files are already as they were before the restore';
  return `brought back ${result.written.join(', ')}${changed.length > 0 ? `; left as ${left} (changed since the restore): ${changed.join(', ')}` : ''}`;
}

/**
 * Brings back the exact bytes a file restore replaced, for every file still as the restore left
 * it (live hash = writtenHash); files changed since are reported and left alone. The undo is
 * itself a restore record (kind `undo`), appended before the writes, so it can be undone too.
 * Patches the restore rolled back go back to `pending`.
 */
export async function undoFileRestore(deps: RestoreDeps, record: RestoreRecord): Promise<UndoResult> {
  const work: FileWork[] = [];
  const conflicts: FileFailure[] = [];
  for (const file of [...record.files].reverse()) {
    const live = await deps.workspace.read(file.path);
    const liveHash = live?.hash ?? ABSENT;
    if (liveHash !== file.writtenHash) {
      conflicts.push({ path: file.path, error: 'changed since the restore; left as it is' });
      continue;
    }
    if (!(await sameBit(deps, file))) {
      conflicts.push({ path: file.path, error: 'its executable bit changed since the restore; left as it is' });
      continue;
    }
    const bits = {
      ...(file.writtenExec === undefined ? {} : { liveExec: file.writtenExec }),
      ...(file.replacedExec === undefined ? {} : { resultExec: file.replacedExec }),
    };
    work.push({
      plan: { path: file.path, status: 'revert', liveHash, resultHash: file.replacedHash, ...bits, patches: [] },
      live: live?.bytes ?? null,
      result: await bytesOf(deps, file.replacedHash, file.replacedBlob),
    });
  }
  if (work.length === 0) return { written: [], conflicts };
  const files = work.map((w) => {
    const original = record.files.find((f) => f.path === w.plan.path)!;
    return {
      path: original.path,
      replacedHash: original.writtenHash,
      ...(original.writtenBlob === undefined ? {} : { replacedBlob: original.writtenBlob }),
      writtenHash: original.replacedHash,
      ...(original.replacedBlob === undefined ? {} : { writtenBlob: original.replacedBlob }),
      ...(original.writtenExec === undefined ? {} : { replacedExec: original.writtenExec }),
      ...(original.replacedExec === undefined ? {} : { writtenExec: original.replacedExec }),
    };
  });
  const undo = restoreRecord(deps, 'undo', files, [...record.patchIds], { undoes: record.restoreId });
  await deps.journal.append([restoreRecordToNew(undo)]);
  const { written, failed } = await writeFiles(deps, work);
  // Undoing a rollback reopens its patches; undoing that undo rolls them back again.
  const state = record.kind === 'undo' ? 'rolled_back' : 'pending';
  const reopened: NewRecord[] = record.patchIds.map((patchId) => ({
    type: 'patch_state',
    patchId,
    state,
    reason: `undo of ${record.restoreId}`,
  }));
  const notes: NewRecord[] = [...conflicts, ...failed].map((f) => ({
    type: 'note',
    kind: 'warning',
    text: `undo left ${f.path} alone: ${f.error}`,
  }));
  await deps.journal.append([restoreDone(undo, written, failed), ...reopened, ...notes]);
  return { restore: undo, written, conflicts: [...conflicts, ...failed] };
}

/**
 * Undo of any restore: a session branch goes back to the head it left; files get their exact
 * bytes back; a restore of both does both (the files first, so a conflict leaves the session too).
 */
export async function undoRestore(deps: RestoreDeps, records: readonly StoredRecord[], record: RestoreRecord): Promise<UndoResult> {
  if (record.branchId === undefined) return undoFileRestore(deps, record);
  const paired =
    record.withRestore === undefined ? undefined : records.find((r) => r.type === 'restore' && r.restoreId === record.withRestore);
  const files = paired?.type === 'restore' ? await undoFileRestore(deps, paired) : undefined;
  const restore = await undoSessionRestore(deps, records, record);
  return { restore, written: files?.written ?? [], conflicts: files?.conflicts ?? [] };
}
