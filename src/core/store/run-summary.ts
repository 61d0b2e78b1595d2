import type { RunSummary } from './contract';
import { describeHolder } from './lease-policy';
import { isResumableStatus } from './records';

// What a run's summary says about picking it up: one rule for the CLI and the extension.

/** A run is resumable when it stopped without an end, is intact, and nobody writes it now. */
export function isResumable(run: RunSummary): boolean {
  return run.damaged === undefined && isResumableStatus(run.status, run.leased);
}

/** Interrupted: left `running` (or marked interrupted) with no live writer: a crash, a kill, a closed window. */
export function isInterrupted(run: RunSummary): boolean {
  return run.damaged === undefined && !run.leased && (run.status === 'running' || run.status === 'interrupted');
}

/** Not ended, and held by a live writer right now (another window, another process). */
export function isHeld(run: RunSummary): boolean {
  return run.leased && (run.status === 'running' || run.status === 'paused' || run.status === 'interrupted');
}

/** "run r1 is held by another live writer (pid 42 on box, heartbeat 3 s ago)". */
export function heldMessage(run: RunSummary, now: number): string {
  const who = run.holder ? ` (${describeHolder(run.holder, now)})` : '';
  return `run ${run.runId} is held by another live writer${who}; it was not resumed`;
}
