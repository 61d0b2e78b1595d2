import type { Patch } from '../patches/schema';
import type { CheckpointStore, RunWriter } from '../store/contract';
import { noteFileChanges, restoreChanges, reviewChanges } from '../store/fold';
import type { FileChange, StoredRecord } from '../store/records';
import type { ResumeState } from '../store/resume-state';

// A fork's files are the workspace's: what a person does to them in its parent (or further up)
// after the fork was made (a restore, an undo of one, an inline undo) changes them under the
// fork's model too. Its journal does not hold those records, so the runtime looks for them when
// it opens the fork, before its next request, and records what it found (ancestor_changes): the
// fold adds the files to the note that request carries, as for a change in the run itself.

interface Seen {
  runId: string;
  seq: number;
}

/** The person's file changes among `records` after `from` (a restore's files it left as they were excepted). */
function changesAfter(records: readonly StoredRecord[], from: number): FileChange[] {
  const patches = new Map<string, Patch>();
  const changes: FileChange[] = [];
  for (const record of records) {
    if (record.type === 'patch') patches.set(record.patch.patchId, record.patch);
    if (record.seq <= from) continue;
    if (record.type === 'restore') changes.push(...restoreChanges(record));
    else if (record.type === 'review' && record.decision === 'undo') changes.push(...reviewChanges({ patches }, record));
    else if (record.type === 'restore_done') {
      const left = new Set(record.left.map((l) => l.path));
      for (let i = changes.length - 1; i >= 0; i--) if (left.has(changes[i]!.path)) changes.splice(i, 1);
    }
  }
  return changes;
}

/** Walks up the fork's ancestry: each ancestor's changes after the point its child stands on (or after what was seen of it). */
async function collect(store: CheckpointStore, state: ResumeState): Promise<{ seen: Seen[]; changes: FileChange[] }> {
  const before = new Map((state.ancestorsSeen ?? []).map((s) => [s.runId, s.seq]));
  const seen: Seen[] = [];
  const changes: FileChange[] = [];
  let point = state.run.parent;
  while (point && !seen.some((s) => s.runId === point!.runId)) {
    const records = await store.readRecords(point.runId);
    changes.push(...changesAfter(records, Math.max(point.seq, before.get(point.runId) ?? 0)));
    seen.push({ runId: point.runId, seq: records.at(-1)?.seq ?? point.seq });
    const runId = point.runId;
    point = records.find((r): r is Extract<StoredRecord, { type: 'fork' }> => r.type === 'fork' && r.runId === runId)?.parent;
  }
  return { seen, changes };
}

/**
 * For a fork just opened by `writer`: records the person's changes in its ancestors since it
 * last looked (one ancestor_changes record, when there are any) and returns its resume state
 * as that record leaves it. A run that is no fork is returned as it is.
 */
export async function takeInAncestorChanges(
  store: CheckpointStore,
  writer: Pick<RunWriter, 'append'>,
  state: ResumeState,
): Promise<ResumeState> {
  if (!state.run.parent) return state;
  const { seen, changes } = await collect(store, state);
  if (changes.length === 0) return state;
  await writer.append([{ type: 'ancestor_changes', seen, changes }]);
  const noted = { fileChanges: state.fileChanges };
  noteFileChanges(noted, changes);
  return { ...state, ancestorsSeen: seen, ...(noted.fileChanges ? { fileChanges: noted.fileChanges } : {}) };
}
