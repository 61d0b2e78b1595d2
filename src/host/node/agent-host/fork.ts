import { randomUUID } from 'node:crypto';
import type { Clock, Log, Workspace } from '../../../core/ports';
import { forkAt, type ForkPlace, type ForkResult, type WithParentWriter } from '../../../core/restore/fork';
import { newRunId } from '../../../core/runtime/runtime';
import type { CheckpointStore } from '../../../core/store/contract';

// A fork of a run (core/restore/fork.ts) as both hosts make one: a new run id, and the files
// rolled back under the parent's writer when they are restored too.

/**
 * How the parent's files are rolled back with 'restore': under the host's own writer (the
 * extension's settles cut restores first), or the parent's writer opened plainly over `workspace`.
 */
type ParentWriter = { readonly withParentWriter: WithParentWriter } | { readonly workspace: Workspace; readonly log: Log };

export type ForkOptions = { readonly files: 'keep' | 'restore'; readonly force?: boolean; readonly clock: Clock } & ParentWriter;

/** Forks `parentId` at `place` as a new, paused run; the parent stays as it was but for its files' rollback with 'restore'. */
export function forkRun(store: CheckpointStore, parentId: string, place: ForkPlace, options: ForkOptions): Promise<ForkResult> {
  return forkAt(store, parentId, place, {
    runId: newRunId(options.clock.now()),
    files: options.files,
    ...(options.force !== undefined ? { force: options.force } : {}),
    withParentWriter: 'withParentWriter' in options ? options.withParentWriter : plainParentWriter(store, parentId, options),
  });
}

function plainParentWriter(
  store: CheckpointStore,
  parentId: string,
  options: { workspace: Workspace; log: Log; clock: Clock },
): WithParentWriter {
  return async (work) => {
    const writer = await store.openWriter(parentId);
    try {
      return await work({
        workspace: options.workspace,
        blobs: store,
        journal: writer,
        clock: options.clock,
        log: options.log,
        newId: randomUUID,
      });
    } finally {
      await writer.close().catch(() => undefined);
    }
  };
}
