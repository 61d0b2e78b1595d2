import type { CheckpointStore, RunState, RunSummary } from '../../core/store/contract';

export function latestRun(runs: readonly RunSummary[]): RunSummary | undefined {
  return [...runs].sort((a, b) => b.updatedAt - a.updatedAt)[0];
}

/** What `status --json` prints: the run, its status, budget, steps, checkpoints, ledger and patches. */
export function statusJson(state: RunState): Record<string, unknown> {
  return {
    run: {
      runId: state.run.runId,
      task: state.run.task,
      createdAt: new Date(state.run.createdAt).toISOString(),
      workspaceFolders: state.run.workspaceFolders,
      settings: state.run.settings,
      git: state.run.git,
    },
    status: state.status,
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
      toolCallId: p.toolCallId,
    })),
  };
}

export async function readStatus(store: CheckpointStore, runId: string | undefined): Promise<RunState | undefined> {
  const id = runId ?? latestRun(await store.listRuns())?.runId;
  return id === undefined ? undefined : store.readRun(id);
}
