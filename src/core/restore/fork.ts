import type { CheckpointStore, ForkRequest, RunState, RunSummary } from '../store/contract';
import { stepStartOf } from '../store/history';
import { rollbackFiles, RollbackTargetError, type RollbackResult } from './rollback';
import type { RestoreDeps } from './types';

// Rewind is a fork: going back to a step starts a new run whose history is the parent's up to
// there; the parent stays as it was, resumable. With `files: 'restore'` the files go back first,
// as an in-place, undoable rollback recorded in the parent (which wrote them), then the fork.

/** Where a fork starts, as the store takes it: the start of a step, or a point inside one. */
export type ForkPlace = Pick<ForkRequest, 'step' | 'checkpointId'>;

/**
 * A checkpoint as a fork place: a step's before_model is its start, one that closes its step (the
 * next one opens a later step) the start of that next step; any other is a point inside its step.
 */
export function placeOf(state: Pick<RunState, 'checkpoints'>, checkpointId: string): ForkPlace {
  const at = state.checkpoints.findIndex((c) => c.checkpointId === checkpointId);
  if (at === -1) throw new RollbackTargetError(`no checkpoint ${checkpointId} in the run's active history`);
  const checkpoint = state.checkpoints[at]!;
  const next = state.checkpoints[at + 1];
  if (checkpoint.label === 'before_model') return { step: checkpoint.stepId };
  if (next && next.stepId > checkpoint.stepId) return { step: next.stepId };
  return { step: Math.max(1, checkpoint.stepId), checkpointId };
}

export interface ForkResult {
  readonly fork: RunSummary;
  /** The files' rollback in the parent, when they were restored. */
  readonly files?: RollbackResult;
}

/** Runs work under the parent's writer, closed once it is done (so the fork stands on what it wrote). */
export type WithParentWriter = (work: (deps: RestoreDeps) => Promise<RollbackResult>) => Promise<RollbackResult>;

/** Forks `parentId` at `place`; with files 'restore', rolls the files back to that point first, under the parent's writer. */
export async function forkAt(
  store: CheckpointStore,
  parentId: string,
  place: ForkPlace,
  options: { runId: string; files: ForkRequest['files']; withParentWriter?: WithParentWriter; force?: boolean },
): Promise<ForkResult> {
  let files: RollbackResult | undefined;
  if (options.files === 'restore') {
    if (!options.withParentWriter) throw new Error("restoring the files needs the parent's writer");
    const state = await store.readRun(parentId);
    const checkpointId = place.checkpointId ?? stepStartOf(state.checkpoints, place.step)?.checkpointId;
    if (checkpointId === undefined) throw new RollbackTargetError(`run ${parentId} has no step ${place.step}`);
    const force = options.force ?? false;
    files = await options.withParentWriter((deps) => rollbackFiles(deps, state, { kind: 'checkpoint', checkpointId }, { force }));
  }
  const fork = await store.forkRun(parentId, { runId: options.runId, ...place, files: options.files });
  return { fork, ...(files ? { files } : {}) };
}
