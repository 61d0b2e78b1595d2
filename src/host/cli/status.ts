import { StoreError, type CheckpointStore, type RunState, type RunSummary } from '../../core/store/contract';
import type { ResumeState } from '../../core/store/resume-state';
import { heldMessage, isHeld, isResumable } from '../../core/runtime/resumable';
import { UsageError } from './args';

export function latestRun(runs: readonly RunSummary[]): RunSummary | undefined {
  return [...runs].sort((a, b) => b.updatedAt - a.updatedAt)[0];
}

/** What `status --json` prints: the run, its status, budget, steps, checkpoints, ledger and patches; for a damaged journal, the damage and its intact part. */
export function statusJson(state: RunState): Record<string, unknown> {
  return {
    run: {
      runId: state.run.runId,
      task: state.run.task,
      createdAt: new Date(state.run.createdAt).toISOString(),
      workspaceFolders: state.run.workspaceFolders,
      settings: state.run.settings,
      git: state.run.git,
      ...(state.run.system !== undefined ? { system: state.run.system } : {}),
      ...(state.run.prompt !== undefined ? { prompt: state.run.prompt } : {}),
    },
    status: state.status,
    ...(state.damage !== undefined ? { damage: state.damage, readOnly: true } : {}),
    ...(state.statusReason !== undefined ? { reason: state.statusReason } : {}),
    budget: state.budget,
    steps: state.stepId,
    checkpoints: state.checkpoints.map((c) => ({
      checkpointId: c.checkpointId,
      stepId: c.stepId,
      label: c.label,
      ...(c.callId !== undefined ? { callId: c.callId } : {}),
      at: new Date(c.at).toISOString(),
    })),
    ledger: state.ledger.map((e) => ({
      callId: e.callId,
      stepId: e.stepId,
      toolName: e.toolName,
      status: e.status,
      idempotency: e.idempotency,
      replayPolicy: e.replayPolicy,
      compensation: e.compensation,
      ...(e.isError ? { isError: true } : {}),
      ...(e.error !== undefined ? { error: e.error } : {}),
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
      ...(e.patchIds !== undefined ? { patchIds: e.patchIds } : {}),
    })),
    patches: state.patches.map((p) => ({
      patchId: p.patchId,
      path: p.path,
      op: p.op,
      state: p.state,
      added: p.added,
      removed: p.removed,
      ...(p.execBefore !== undefined ? { execBefore: p.execBefore } : {}),
      ...(p.execAfter !== undefined ? { execAfter: p.execAfter } : {}),
      toolCallId: p.toolCallId,
    })),
  };
}

/** The line `status` prints first for a damaged journal. */
export function damageLine(state: RunState): string | undefined {
  const d = state.damage;
  if (d === undefined) return undefined;
  return `damaged: ${d.file} at byte ${d.offset}: ${d.message}; shown below is the intact part before it, read-only (the run cannot be resumed until the journal is repaired)`;
}

/** The run's state for `status`: a damaged journal gives its intact part, with the damage. */
export async function readStatus(store: CheckpointStore, runId: string | undefined): Promise<RunState | undefined> {
  const id = runId ?? latestRun(await store.listRuns())?.runId;
  return id === undefined ? undefined : store.readRun(id, { intactPart: true });
}

/**
 * The run `resume` takes (the one named, else the newest resumable) and its resume state: what
 * the resume reads anyway (the newest snapshot and the journal after it), never the whole run.
 */
export async function resumeTarget(store: CheckpointStore, runId: string | undefined, storePath: string): Promise<ResumeState> {
  const runs = [...(await store.listRuns())].sort((a, b) => b.updatedAt - a.updatedAt);
  const held = runs.find((r) => (runId === undefined || r.runId === runId) && isHeld(r));
  const id = runId ?? runs.find(isResumable)?.runId;
  if (held !== undefined && (runId !== undefined || id === undefined)) throw new StoreError(heldMessage(held, Date.now()), 'lease_held');
  if (id === undefined) throw new UsageError(`no resumable run in ${storePath}`);
  return store.readResumeState(id);
}
