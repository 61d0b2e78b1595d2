import type { FoldState } from './fold';
import type { RestoreDoneRecord, RestoreRecord } from './records';
import type { FileChange } from './resume-state';

// The files the model must hear of: what restores, rollbacks and the review's undos changed since
// its last request (the fold's `fileChanges`, which the next before_model clears).

export function noteFileChanges(state: Pick<FoldState, 'fileChanges'>, changes: readonly FileChange[]): void {
  if (changes.length === 0) return;
  const kept = (state.fileChanges ?? []).filter((c) => !changes.some((n) => n.path === c.path));
  state.fileChanges = [...kept, ...changes];
}

/** A restore's writes are confirmed: it no longer awaits them; a file it left as it was is no change the model must hear of. */
export function settleRestore(
  state: Pick<FoldState, 'restores' | 'fileChanges'>,
  done: Pick<RestoreDoneRecord, 'restoreId' | 'left'>,
): void {
  state.restores = state.restores.map((r) => (r.restoreId === done.restoreId ? withoutConfirm(r) : r));
  const left = new Set(done.left.map((l) => l.path));
  if (left.size > 0 && state.fileChanges) state.fileChanges = state.fileChanges.filter((c) => !left.has(c.path));
}

function withoutConfirm({ confirm: _confirm, ...record }: RestoreRecord): RestoreRecord {
  return record;
}

export function restoreChanges(record: RestoreRecord): FileChange[] {
  const what =
    record.kind === 'undo'
      ? 'a restore was undone by the person: its content before that restore is back'
      : record.step !== undefined
        ? `restored by the person to its content at step ${record.step}`
        : "rolled back by the person: the agent's change was undone";
  return record.files.map((file) => ({ path: file.path, what }));
}

export function reviewChanges(
  state: Pick<FoldState, 'patches'>,
  record: { hunks: readonly { patchId: string }[]; paths?: readonly string[] },
): FileChange[] {
  const paths = new Set([...(record.paths ?? []), ...record.hunks.flatMap((h) => state.patches.get(h.patchId)?.path ?? [])]);
  return [...paths].map((path) => ({ path, what: "a hunk of the agent's change was undone by the person" }));
}
