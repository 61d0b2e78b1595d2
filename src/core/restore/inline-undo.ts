import type { HunkRef } from '../patches/review';
import type { Patch } from '../patches/schema';
import type { NewRecord } from '../store/records';
import type { FileWork } from './plan';
import { restoreDone, restoreFiles, restoreRecord, restoreRecordToNew, writeFiles } from './rollback';
import { undoDecision } from './settle';
import type { RestoreDeps } from './types';

// An inline Undo of hunks of one file follows the write-ahead rule of every restore: a restore
// record naming the hunks (with the bytes it replaces and writes) is on disk before the edit;
// the edit; then its restore_done and the `review` undo decision. A stop between the record and
// the edit is settled on the next open (settle.ts): the file still holding the agent's lines is
// left and reported; one holding the undone text gets its decision then. Either way the edit is
// never taken for the person's own, and it can be undone as a restore.

export interface InlineUndo {
  readonly path: string;
  /** The live bytes the undo was computed against, and their hash as the workspace gives it. */
  readonly live: Uint8Array;
  readonly liveHash: string;
  /** The text with the hunks undone. */
  readonly result: Uint8Array;
  readonly resultHash: string;
  readonly hunks: readonly HunkRef[];
  /** The executable bit an Undo of a change of the bit sets back (`modeUndo`), checked against the live one. */
  readonly exec?: ExecUndo;
}

export interface ExecUndo {
  readonly live: boolean;
  readonly result: boolean;
}

/**
 * The Undo of a patch's change of the executable bit, against the live file (`liveHash`, `liveExec`
 * as the workspace gives them): the bit goes back only while the file has the bit the agent left,
 * and, for a mode-only patch, its bytes; otherwise an error saying so, and nothing is undone.
 */
export function modeUndo(patch: Patch, liveHash: string, liveExec: boolean | null | undefined): ExecUndo {
  const after = patch.execAfter;
  if (after === undefined || patch.execBefore === undefined) throw new Error(`${patch.path}: the agent did not change its executable bit`);
  const agent = after ? 'made it executable' : 'made it no longer executable';
  if (liveExec === null) throw new Error(`${patch.path} no longer exists; nothing was undone`);
  if (liveExec === undefined) throw new Error(`this workspace has no file modes; ${patch.path} was left as it is`);
  if (liveExec !== after)
    throw new Error(`${patch.path} is ${liveExec ? '' : 'not '}executable now, not as the agent left it; nothing was undone`);
  if (patch.beforeHash === patch.afterHash && liveHash !== patch.afterHash)
    throw new Error(`${patch.path} changed since the agent ${agent}; nothing was undone`);
  return { live: after, result: patch.execBefore };
}

/** Records, writes and confirms an inline Undo; returns whether the file was written (false: it changed meanwhile, left as it is). */
export async function undoHunksInline(deps: RestoreDeps, undo: InlineUndo): Promise<boolean> {
  const work: FileWork = {
    plan: {
      path: undo.path,
      status: 'revert',
      liveHash: undo.liveHash,
      resultHash: undo.resultHash,
      ...(undo.exec ? { liveExec: undo.exec.live, resultExec: undo.exec.result } : {}),
      patches: [],
    },
    live: undo.live,
    result: undo.result,
  };
  const restore = restoreRecord(deps, 'rollback_files', await restoreFiles(deps, [work]), [], { hunks: [...undo.hunks] });
  await deps.journal.append([restoreRecordToNew(restore)]);
  const { written, failed } = await writeFiles(deps, [work]);
  const notes: NewRecord[] = failed.map((f) => ({
    type: 'note',
    kind: 'warning',
    text: `undo of a hunk left ${f.path} alone: ${f.error}`,
  }));
  await deps.journal.append([restoreDone(restore, written, failed), ...undoDecision(restore, written), ...notes]);
  return written.length > 0;
}
