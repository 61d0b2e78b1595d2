import type { RunOutcome } from '../../core/runtime/types';
import { errorText } from '../../core/error-text';

// A worker goes on with the runs of a shared (PostgreSQL) store that nobody holds: queued ones
// (`run --detach`) and ones whose holder is gone (a killed worker, a closed laptop). It claims one
// at a time per slot, under the run's lease, and resumes it under the ledger's rules: a call cut
// mid-flight is reconciled as after any crash, never blindly repeated. A run that needs a person
// (an approval, an outcome only a person can tell) pauses and is left for the Timeline or
// `resume`; workers take only running or interrupted runs.

export interface WorkerStore {
  /** One run of `workspace` that nobody holds, not in `skip`, claimed for this process (its next openWriter), or null. */
  claimRun(workspace: string, skip?: readonly string[]): Promise<string | null>;
}

export interface WorkerOptions {
  readonly store: WorkerStore;
  /** The workspace this worker may work on (workspaceKey of its folder): it takes only runs of it. */
  readonly workspace: string;
  readonly concurrency: number;
  /** Stop when a claim finds nothing, instead of polling for more. */
  readonly exitWhenIdle: boolean;
  readonly signal: AbortSignal;
  /** Goes on with a claimed run. */
  resume(runId: string, signal: AbortSignal): Promise<RunOutcome>;
  log(line: string): void;
  readonly pollMs?: number;
}

export interface WorkerReport {
  readonly outcomes: readonly RunOutcome[];
  readonly failures: readonly string[];
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Runs `concurrency` slots until cancelled (or, with exitWhenIdle, until nothing is left to claim). */
export async function runWorker(options: WorkerOptions): Promise<WorkerReport> {
  const outcomes: RunOutcome[] = [];
  const failures: string[] = [];
  // A run that could not go on here (damaged, refused) is left to a person, not claimed again.
  const refused: string[] = [];
  const slot = async (): Promise<void> => {
    while (!options.signal.aborted) {
      const runId = await options.store.claimRun(options.workspace, refused).catch((error: unknown) => {
        failures.push(`claim: ${errorText(error)}`);
        options.log(`worker: could not claim a run: ${failures.at(-1)}`);
        return null;
      });
      if (runId === null) {
        if (options.exitWhenIdle) return;
        await sleep(options.pollMs ?? 2000, options.signal);
        continue;
      }
      options.log(`worker: claimed run ${runId}`);
      try {
        const outcome = await options.resume(runId, options.signal);
        outcomes.push(outcome);
        options.log(`worker: run ${runId} ${outcome.status}${outcome.reason ? `: ${outcome.reason}` : ''}`);
      } catch (error) {
        refused.push(runId);
        failures.push(`${runId}: ${errorText(error)}`);
        options.log(`worker: run ${runId} could not go on: ${failures.at(-1)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, slot));
  return { outcomes, failures };
}
