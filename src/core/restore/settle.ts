import { liveExec } from '../patches/exec-bit';
import { ABSENT } from '../patches/hash';
import type { Workspace } from '../ports';
import type { RunWriter } from '../store/contract';
import { noteFileChanges, reviewChanges, settleRestore } from '../store/fold';
import type { NewRecord, RestoreRecord } from '../store/records';
import type { ResumeState } from '../store/resume-state';
import { restoreDone, type FileFailure } from './rollback';

// The write-ahead rule for restores: a restore's record (with what it replaces) is on disk before
// its file writes, and a `restore_done` record confirms them. A stop between the two (kill -9,
// crash) leaves a restore awaiting its confirmation; whoever opens the run for writing next
// settles it against the files as they are, before anything else, and says so: a file that holds
// what the restore meant to write was written, any other was left as it was (reported, never
// taken as restored). Nothing is written: the person restores again if they still want it.

/** The restores of a run whose writes no `restore_done` confirms yet. */
export function cutRestores(restores: readonly RestoreRecord[]): RestoreRecord[] {
  return restores.filter((r) => r.confirm === true);
}

async function outcome(workspace: Workspace, restore: RestoreRecord): Promise<{ written: string[]; left: FileFailure[] }> {
  const written: string[] = [];
  const left: FileFailure[] = [];
  for (const file of restore.files) {
    const live = (await workspace.read(file.path))?.hash ?? ABSENT;
    // A restore of the executable bit alone (the same bytes) was written only if the bit is the one it meant.
    const bit = file.writtenExec === undefined ? undefined : await liveExec(workspace, file.path);
    if (live === file.writtenHash && (bit === undefined || bit === null || bit === file.writtenExec)) written.push(file.path);
    else
      left.push({
        path: file.path,
        error:
          live === file.replacedHash
            ? 'the restore was cut before it wrote this file; it was left as it was'
            : 'the restore was cut, and the file changed since; it was left as it is',
      });
  }
  return { written, left };
}

/** An inline Undo's review decision, once its file holds the undone text (not before: the hunk would be hidden while its lines are there). */
export function undoDecision(restore: RestoreRecord, written: readonly string[]): NewRecord[] {
  if (!restore.hunks || restore.hunks.length === 0 || written.length === 0) return [];
  return [{ type: 'review', decision: 'undo', hunks: restore.hunks, paths: [...written] }];
}

/**
 * Settles every cut restore of the run just opened by `writer` (one commit group: a
 * `restore_done` marked `cut` per restore, a warning note for each that left files), and
 * returns the writer's resume state as those records leave it.
 */
export async function settleCutRestores(workspace: Workspace, writer: Pick<RunWriter, 'append' | 'resumeState'>): Promise<ResumeState> {
  const state = writer.resumeState;
  const cut = cutRestores(state.restores);
  if (cut.length === 0) return state;
  const records: NewRecord[] = [];
  const settled = { restores: [...state.restores], fileChanges: state.fileChanges };
  for (const restore of cut) {
    const { written, left } = await outcome(workspace, restore);
    const decision = undoDecision(restore, written);
    records.push(restoreDone(restore, written, left, true), ...decision);
    settleRestore(settled, { restoreId: restore.restoreId, left: left.map((l) => ({ path: l.path, reason: l.error })) });
    if (decision.length > 0)
      noteFileChanges(settled, reviewChanges({ patches: new Map() }, { hunks: restore.hunks ?? [], paths: written }));
    if (left.length > 0)
      records.push({
        type: 'note',
        kind: 'warning',
        text: `restore ${restore.restoreId} was cut before all its file writes: ${left.map((l) => l.path).join(', ')} left as they were (restore again to finish it)`,
      });
  }
  await writer.append(records);
  const { fileChanges, restores } = settled;
  const { fileChanges: _old, ...rest } = state;
  return { ...rest, restores, ...(fileChanges && fileChanges.length > 0 ? { fileChanges } : {}) };
}
