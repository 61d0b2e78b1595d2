import { randomUUID } from 'node:crypto';
import type { Clock, Log, Workspace } from '../../../core/ports';
import { planRollback, rollbackFiles, type RollbackResult } from '../../../core/restore/rollback';
import { placeOf, type ForkPlace, type ForkResult } from '../../../core/restore/fork';
import { forkRun } from '../../node/agent-host/fork';
import type { RestoreDeps, RollbackOptions, RollbackPlan, RollbackTarget } from '../../../core/restore/types';
import { settleCutRestores } from '../../../core/restore/settle';
import { modeUndo, undoHunksInline } from '../../../core/restore/inline-undo';
import { decodeText, encodeText, hashContent } from '../../../core/patches/hash';
import { liveExec } from '../../../core/patches/exec-bit';
import type { HunkRef } from '../../../core/patches/review';
import type { Patch } from '../../../core/patches/schema';
import { undoRestore, type UndoResult } from '../../../core/restore/undo';
import { describeTornTailCut } from '../../../core/runtime/resumable';
import type { CheckpointStore, RunSummary } from '../../../core/store/contract';
import { lastUndoableRestore } from '../../../core/store/listing-facts';

export type RestoreWhat = 'files' | 'session' | 'both';

export class RunBusyError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} is running in this window: cancel it before restoring or rolling back`);
    this.name = 'RunBusyError';
  }
}

export { lastUndoableRestore } from '../../../core/store/listing-facts';

export interface RestoreActionsDeps {
  readonly store: CheckpointStore;
  readonly workspace: Workspace;
  readonly clock: Clock;
  readonly log: Log;
  /** True while this window's runtime writes the run. */
  readonly isRunning: (runId: string) => boolean;
}

/**
 * rollback_files, restore_session, both, undo and accept, each under the run's writer lease so
 * that nothing else writes the run meanwhile. Used by the commands and by the timeline.
 */
export class RestoreActions {
  constructor(private readonly deps: RestoreActionsDeps) {}

  private async withWriter<T>(runId: string, work: (deps: RestoreDeps) => Promise<T>): Promise<T> {
    if (this.deps.isRunning(runId)) throw new RunBusyError(runId);
    const writer = await this.deps.store.openWriter(runId);
    if (writer.tornTailCut) this.deps.log.log('warn', describeTornTailCut(runId, writer.tornTailCut));
    try {
      await settleCutRestores(this.deps.workspace, writer);
      return await work({
        workspace: this.deps.workspace,
        blobs: this.deps.store,
        journal: writer,
        clock: this.deps.clock,
        log: this.deps.log,
        newId: randomUUID,
      });
    } finally {
      await writer.close().catch(() => undefined);
    }
  }

  /**
   * An inline Undo of hunks of one file of a run, as a restore (write-ahead: its record before the
   * edit, restore_done and the review decision after), so a stop between the edit and the record
   * is settled on the next open, never taken for the person's own edit. `transform` makes the
   * undone text from the live one (it throws when that is not the text it was planned on).
   * `mode`: the patch whose change of the executable bit is among the hunks (its bit goes back,
   * checked against the live file: `modeUndo` throws when it is not the agent's any more).
   * False when the file changed meanwhile (left as it is).
   */
  async undoHunks(
    runId: string,
    path: string,
    hunks: readonly HunkRef[],
    transform: (live: string) => string,
    mode?: Patch,
  ): Promise<boolean> {
    return this.withWriter(runId, async (deps) => {
      const live = await deps.workspace.read(path);
      const decoded = live && decodeText(live.bytes);
      if (!live || !decoded) throw new Error(`${path} is missing or not text now; nothing was undone`);
      const exec = mode ? { exec: modeUndo(mode, live.hash, await liveExec(deps.workspace, path)) } : {};
      const result = encodeText(transform(decoded.text), decoded.bom);
      return undoHunksInline(deps, {
        path,
        live: live.bytes,
        liveHash: live.hash,
        result,
        resultHash: hashContent(result),
        hunks,
        ...exec,
      });
    });
  }

  /** What a rollback would do against live content now; touches and records nothing. */
  async planRollback(runId: string, target: RollbackTarget, force = false): Promise<RollbackPlan> {
    const state = await this.deps.store.readRun(runId);
    return (await planRollback({ workspace: this.deps.workspace, blobs: this.deps.store }, state, target, force)).plan;
  }

  async rollback(runId: string, target: RollbackTarget, options: Omit<RollbackOptions, 'dryRun'> = {}): Promise<RollbackResult> {
    return this.withWriter(runId, async (deps) => rollbackFiles(deps, await this.deps.store.readRun(runId), target, options));
  }

  /**
   * Files: an in-place, undoable rollback. Session, or both: a fork of the run at the checkpoint
   * (the files rolled back first, in the run, for both); the run itself stays as it was.
   */
  async restoreCheckpoint(
    runId: string,
    checkpointId: string,
    what: RestoreWhat,
    force = false,
  ): Promise<{ files?: RollbackResult; fork?: RunSummary }> {
    if (what === 'files')
      return this.withWriter(runId, async (deps) => ({
        files: await rollbackFiles(deps, await this.deps.store.readRun(runId), { kind: 'checkpoint', checkpointId }, { force }),
      }));
    const place = placeOf(await this.deps.store.readRun(runId), checkpointId);
    return this.fork(runId, place, what === 'both' ? 'restore' : 'keep', force);
  }

  /** A fork of the run at `place` (the start of a step, or a point inside one); the run is not changed, but for its files' rollback with 'restore'. */
  async fork(runId: string, place: ForkPlace, files: 'keep' | 'restore', force = false): Promise<ForkResult> {
    if (files === 'restore' && this.deps.isRunning(runId)) throw new RunBusyError(runId);
    return forkRun(this.deps.store, runId, place, {
      files,
      force,
      clock: this.deps.clock,
      withParentWriter: (work) => this.withWriter(runId, work),
    });
  }

  /** Undoes the newest restore of the run not undone yet; undefined when there is none. */
  async undoLastRestore(runId: string): Promise<UndoResult | undefined> {
    return this.withWriter(runId, async (deps) => {
      const record = lastUndoableRestore(await this.deps.store.readRun(runId));
      if (!record) return undefined;
      return undoRestore(deps, await this.deps.store.readRecords(runId), record);
    });
  }

  async accept(runId: string, patchId: string): Promise<void> {
    await this.withWriter(runId, async (deps) => {
      await deps.journal.append([{ type: 'patch_state', patchId, state: 'accepted', reason: 'accepted by the user' }]);
    });
  }
}
