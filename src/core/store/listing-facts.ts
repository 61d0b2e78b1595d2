import type { RestoreRecord, StoredRecord } from './records';

// The facts of a run's fold that its listing carries (state.json), so that nothing reads a
// journal to know them: what waits for review, whether a restore can be undone.

/** The newest restore of a run that no later undo has undone, or undefined. */
export function lastUndoableRestore(state: { readonly restores: readonly RestoreRecord[] }): RestoreRecord | undefined {
  const undone = new Set(state.restores.flatMap((r) => (r.undoes !== undefined ? [r.undoes] : [])));
  return [...state.restores].reverse().find((r) => !undone.has(r.restoreId) && r.kind !== 'undo');
}

/**
 * The listing's pending patches (ids) after `records`, step by step as the fold moves them: a
 * patch comes in pending, a patch_state moves it out (accepted, rolled back) or back in. The
 * listing carries them so that nothing reads a journal to know what waits for review.
 */
export function pendingAfter(pending: readonly string[], records: Iterable<StoredRecord>): string[] {
  const out = new Set(pending);
  for (const record of records) {
    const [id, state] =
      record.type === 'patch'
        ? [record.patch.patchId, record.patch.state]
        : record.type === 'patch_state'
          ? [record.patchId, record.state]
          : [];
    if (id === undefined) continue;
    if (state === 'pending') out.add(id);
    else out.delete(id);
  }
  return [...out];
}
