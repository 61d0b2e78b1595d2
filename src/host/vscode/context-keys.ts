import * as vscode from 'vscode';
import type { Log } from '../../core/ports';
import type { CheckpointStore, RunState, RunSummary } from '../../core/store/contract';
import { isResumable } from './agent-controller';
import { lastUndoableRestore } from './restore-actions';

export const CONTEXT = {
  running: 'agentCheckpoints.running',
  hasRuns: 'agentCheckpoints.hasRuns',
  hasResumable: 'agentCheckpoints.hasResumable',
  hasPendingPatches: 'agentCheckpoints.hasPendingPatches',
  canUndoRestore: 'agentCheckpoints.canUndoRestore',
} as const;

/** Runs whose full state is read to compute the patch and undo keys (newest first). */
const RECENT_RUNS = 20;

export interface RunFacts {
  readonly runs: readonly RunSummary[];
  /** Recent runs with at least one pending patch. */
  readonly withPendingPatches: readonly RunSummary[];
  /** Recent runs whose newest restore can be undone. */
  readonly withUndoableRestore: readonly RunSummary[];
}

export async function readRunFacts(store: CheckpointStore, log: Log): Promise<RunFacts> {
  const runs = [...(await store.listRuns())].sort((a, b) => b.updatedAt - a.updatedAt);
  const withPendingPatches: RunSummary[] = [];
  const withUndoableRestore: RunSummary[] = [];
  for (const run of runs.slice(0, RECENT_RUNS)) {
    if (run.damaged !== undefined) continue;
    let state: RunState;
    try {
      state = await store.readRun(run.runId);
    } catch (error) {
      log.log('warn', `run ${run.runId} could not be read: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (state.patches.some((p) => p.state === 'pending')) withPendingPatches.push(run);
    if (lastUndoableRestore(state)) withUndoableRestore.push(run);
  }
  return { runs, withPendingPatches, withUndoableRestore };
}

/** Sets the `when`-clause keys that decide which Agent commands make sense now. */
export class ContextKeys {
  private refreshing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: CheckpointStore,
    private readonly log: Log,
    private readonly runningRunId: () => string | undefined,
  ) {}

  /** Refreshes every key; calls are queued so the last one reflects the latest state. */
  refresh(): Promise<void> {
    this.refreshing = this.refreshing
      .then(() => this.compute())
      .catch((error: unknown) => {
        this.log.log('warn', `context keys not refreshed: ${error instanceof Error ? error.message : String(error)}`);
      });
    return this.refreshing;
  }

  private async compute(): Promise<void> {
    const running = this.runningRunId();
    await vscode.commands.executeCommand('setContext', CONTEXT.running, running !== undefined);
    const facts = await readRunFacts(this.store, this.log);
    const set = (key: string, value: boolean) => vscode.commands.executeCommand('setContext', key, value);
    await set(CONTEXT.hasRuns, facts.runs.length > 0);
    await set(
      CONTEXT.hasResumable,
      facts.runs.some((r) => isResumable(r) && r.runId !== running),
    );
    await set(CONTEXT.hasPendingPatches, facts.withPendingPatches.length > 0);
    await set(CONTEXT.canUndoRestore, facts.withUndoableRestore.length > 0);
  }
}
