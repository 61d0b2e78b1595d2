import * as vscode from 'vscode';
import type { Log } from '../../../core/ports';
import type { RunSummary } from '../../../core/store/contract';
import { isResumable } from '../../../core/runtime/resumable';
import type { RunModel } from './run-model';

export const CONTEXT = {
  running: 'agentCheckpoints.running',
  hasRuns: 'agentCheckpoints.hasRuns',
  hasResumable: 'agentCheckpoints.hasResumable',
  hasPendingPatches: 'agentCheckpoints.hasPendingPatches',
  canUndoRestore: 'agentCheckpoints.canUndoRestore',
} as const;

/** Events of the run model are coalesced this long before the keys are set again. */
const REFRESH_MS = 300;

export interface RunFacts {
  readonly runs: readonly RunSummary[];
  /** Runs with at least one pending patch (a run whose facts the store does not know counts: its commands then explain). */
  readonly withPendingPatches: readonly RunSummary[];
  /** Runs whose newest restore can be undone (likewise). */
  readonly withUndoableRestore: readonly RunSummary[];
}

/** The palette's facts, from the run listing alone: no journal is read. */
export async function readRunFacts(model: Pick<RunModel, 'listRuns'>): Promise<RunFacts> {
  const runs = [...(await model.listRuns())].sort((a, b) => b.updatedAt - a.updatedAt);
  const usable = runs.filter((r) => r.damaged === undefined);
  return {
    runs,
    withPendingPatches: usable.filter((r) => r.pendingPatches === undefined || r.pendingPatches > 0),
    withUndoableRestore: usable.filter((r) => r.undoableRestore !== false),
  };
}

/** Sets the `when`-clause keys that decide which Agent commands make sense now; follows the run model. */
export class ContextKeys implements vscode.Disposable {
  private refreshing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly model: Pick<RunModel, 'listRuns' | 'onDidChange'>,
    private readonly log: Log,
    private readonly runningRunId: () => string | undefined,
  ) {
    this.subscription = model.onDidChange((event) => {
      if (event.kind === 'live' || event.kind === 'review') return;
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        void this.refresh();
      }, REFRESH_MS);
    });
  }

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
    const facts = await readRunFacts(this.model);
    const set = (key: string, value: boolean) => vscode.commands.executeCommand('setContext', key, value);
    await set(CONTEXT.hasRuns, facts.runs.length > 0);
    await set(
      CONTEXT.hasResumable,
      facts.runs.some((r) => isResumable(r) && r.runId !== running),
    );
    await set(CONTEXT.hasPendingPatches, facts.withPendingPatches.length > 0);
    await set(CONTEXT.canUndoRestore, facts.withUndoableRestore.length > 0);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.subscription.dispose();
  }
}
