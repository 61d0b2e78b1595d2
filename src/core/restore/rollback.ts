import { placeExec } from '../patches/exec-bit';
import { bytesEqual } from '../patches/hash';
import { StaleContentError } from '../ports';
import type { Patch } from '../patches/schema';
import type { RunState } from '../store/contract';
import type { NewRecord, RestoreRecord } from '../store/records';
import { planFile, type FileTarget, type FileWork } from './plan';
import type { RestoreDeps, RollbackOptions, RollbackPlan, RollbackTarget } from './types';

/** What a rollback needs of the run: its patches (journal order, latest state) and checkpoints. */
export type RunPatches = Pick<RunState, 'patches' | 'allCheckpoints'>;

export class RollbackTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RollbackTargetError';
  }
}

function patchesOf(run: RunPatches, target: RollbackTarget): Patch[] {
  switch (target.kind) {
    case 'run':
      return [...run.patches];
    case 'checkpoint': {
      const checkpoint = run.allCheckpoints.find((c) => c.checkpointId === target.checkpointId);
      if (!checkpoint) throw new RollbackTargetError(`no checkpoint ${target.checkpointId}`);
      return run.patches.slice(checkpoint.patchCount);
    }
    case 'patch':
    case 'hunk': {
      const patch = run.patches.find((p) => p.patchId === target.patchId);
      if (!patch) throw new RollbackTargetError(`no patch ${target.patchId}`);
      return [patch];
    }
  }
}

/** Files to touch: only paths the agent wrote, each with its patches oldest first. */
function fileTargets(patches: readonly Patch[], target: RollbackTarget): FileTarget[] {
  const byPath = new Map<string, Patch[]>();
  for (const patch of patches) {
    if (patch.state === 'rolled_back') continue;
    const list = byPath.get(patch.path) ?? [];
    list.push(patch);
    byPath.set(patch.path, list);
  }
  return [...byPath].map(([path, list]) => ({ path, patches: list, ...(target.kind === 'hunk' ? { hunk: target.hunkIndex } : {}) }));
}

export interface PlannedRollback {
  readonly plan: RollbackPlan;
  readonly work: readonly FileWork[];
}

/** The rollback plan per file and hunk against live content; touches nothing. */
export async function planRollback(
  deps: Pick<RestoreDeps, 'workspace' | 'blobs'>,
  run: RunPatches,
  target: RollbackTarget,
  force = false,
): Promise<PlannedRollback> {
  const selected = patchesOf(run, target);
  const work: FileWork[] = [];
  for (const file of fileTargets(selected, target)) work.push(await planFile(deps.workspace, deps.blobs, file, force));
  const skipped = selected.filter((p) => p.state === 'rolled_back');
  const plan: RollbackPlan = {
    target,
    force,
    files: [
      ...work.map((w) => w.plan),
      ...skipped.map((p) => ({
        path: p.path,
        status: 'skip' as const,
        reason: `${p.patchId} is already rolled back`,
        liveHash: '',
        resultHash: '',
        patches: [],
      })),
    ],
  };
  return { plan, work };
}

export interface FileFailure {
  readonly path: string;
  readonly error: string;
}

export interface RollbackResult {
  readonly plan: RollbackPlan;
  /** The restore record appended before any write (absent for a dry run or when nothing changes). */
  readonly restore?: RestoreRecord;
  readonly written: readonly string[];
  /** Files whose live content changed between plan and write: left as the user has them. */
  readonly failed: readonly FileFailure[];
}

async function putOrUndefined(deps: RestoreDeps, bytes: Uint8Array | null): Promise<string | undefined> {
  return bytes === null ? undefined : deps.blobs.putBlob(bytes);
}

/** Blobs of what will be replaced and written, stored before the record that names them. */
export async function restoreFiles(deps: RestoreDeps, work: readonly FileWork[]): Promise<RestoreRecord['files']> {
  const files: RestoreRecord['files'] = [];
  for (const w of work) {
    const replacedBlob = await putOrUndefined(deps, w.live);
    const writtenBlob = await putOrUndefined(deps, w.result);
    files.push({
      path: w.plan.path,
      replacedHash: w.plan.liveHash,
      ...(replacedBlob === undefined ? {} : { replacedBlob }),
      writtenHash: w.plan.resultHash,
      ...(writtenBlob === undefined ? {} : { writtenBlob }),
      ...execChange(w),
    });
  }
  return files;
}

/** The executable bit a restore changes (a file it deletes keeps its bit for the undo), as restore record fields. */
function execChange(w: FileWork): { replacedExec?: boolean; writtenExec?: boolean } {
  const { liveExec, resultExec } = w.plan;
  if (liveExec === resultExec) return {};
  return {
    ...(liveExec === undefined ? {} : { replacedExec: liveExec }),
    ...(resultExec === undefined ? {} : { writtenExec: resultExec }),
  };
}

/** Writes each planned file with the live hash it was planned against; stale files are reported. */
export async function writeFiles(deps: RestoreDeps, work: readonly FileWork[]): Promise<{ written: string[]; failed: FileFailure[] }> {
  const written: string[] = [];
  const failed: FileFailure[] = [];
  for (const w of work) {
    try {
      if (w.result === null) await deps.workspace.delete(w.plan.path, w.plan.liveHash);
      else if (!bytesEqual(w.result, w.live)) await deps.workspace.write(w.plan.path, w.result, w.plan.liveHash);
      // Bytes written keep the live file's bit; a file made again has the default one.
      if (w.result !== null) await placeExec(deps.workspace, w.plan.path, w.plan.resultExec, w.live === null ? undefined : w.plan.liveExec);
      written.push(w.plan.path);
    } catch (error) {
      if (!(error instanceof StaleContentError)) throw error;
      failed.push({ path: w.plan.path, error: error.message });
    }
  }
  return { written, failed };
}

export function restoreRecord(
  deps: RestoreDeps,
  kind: RestoreRecord['kind'],
  files: RestoreRecord['files'],
  patchIds: string[],
  extra: Partial<Pick<RestoreRecord, 'undoes' | 'branchId' | 'withRestore' | 'step' | 'hunks'>> = {},
): RestoreRecord {
  // A restore that writes files awaits its restore_done (write-ahead: a stop between the two is settled on the next open).
  const confirm = files.length > 0 ? { confirm: true as const } : {};
  return { v: 1, at: deps.clock.now(), type: 'restore', restoreId: deps.newId(), kind, files, patchIds, ...extra, ...confirm };
}

/** The record confirming a restore's writes: what was written, what was left as it was. */
export function restoreDone(restore: RestoreRecord, written: readonly string[], failed: readonly FileFailure[], cut = false): NewRecord {
  const left = failed.map((f) => ({ path: f.path, reason: f.error }));
  return { type: 'restore_done', restoreId: restore.restoreId, written: [...written], left, ...(cut ? { cut } : {}) };
}

function toNew(record: RestoreRecord): NewRecord {
  const { v: _v, at: _at, ...rest } = record;
  return rest;
}

/** Patches whose file was fully handled: rolled_back (hunk targets leave the patch state alone). */
function rolledBackPatches(target: RollbackTarget, work: readonly FileWork[], written: readonly string[]): string[] {
  if (target.kind === 'hunk') return [];
  return work
    .filter((w) => w.plan.status === 'already' || written.includes(w.plan.path))
    .flatMap((w) => w.plan.patches.filter((p) => p.status === 'revert' || p.status === 'already').map((p) => p.patchId));
}

/**
 * rollback_files: plans against live content; unless dry run, stores blobs of the live content
 * it replaces, appends the `restore` record (durably, before any write), writes each reverted
 * file through Workspace.write/delete with the live hash it planned against, then appends
 * `patch_state` rolled_back for every patch undone and a warning note for files that changed
 * meanwhile. Conflicting files are left alone unless `force`.
 */
export async function rollbackFiles(
  deps: RestoreDeps,
  run: RunPatches,
  target: RollbackTarget,
  options: RollbackOptions = {},
): Promise<RollbackResult> {
  const { plan, work } = await planRollback(deps, run, target, options.force ?? false);
  if (options.dryRun) return { plan, written: [], failed: [] };
  const toWrite = work.filter((w) => w.plan.status === 'revert');
  let restore: RestoreRecord | undefined;
  if (toWrite.length > 0) {
    const patchIds = toWrite.flatMap((w) => w.plan.patches.filter((p) => p.status === 'revert').map((p) => p.patchId));
    const step = target.kind === 'checkpoint' ? run.allCheckpoints.find((c) => c.checkpointId === target.checkpointId)?.stepId : undefined;
    restore = restoreRecord(deps, 'rollback_files', await restoreFiles(deps, toWrite), patchIds, step === undefined ? {} : { step });
    await deps.journal.append([toNew(restore)]);
  }
  const { written, failed } = await writeFiles(deps, toWrite);
  const records: NewRecord[] = rolledBackPatches(target, work, written).map((patchId) => ({
    type: 'patch_state',
    patchId,
    state: 'rolled_back',
    reason: restore ? `rollback ${restore.restoreId}` : 'already not applied',
  }));
  for (const f of failed) records.push({ type: 'note', kind: 'warning', text: `rollback left ${f.path} alone: ${f.error}` });
  if (restore) records.unshift(restoreDone(restore, written, failed));
  if (records.length > 0) await deps.journal.append(records);
  return { plan, ...(restore ? { restore } : {}), written, failed };
}

export { toNew as restoreRecordToNew };
