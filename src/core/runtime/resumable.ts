import type { RunSummary, TornTailCut } from '../store/contract';
import { describeHolder } from '../store/lease-policy';
import { isResumableStatus } from '../../words/statuses';

// Which runs a host offers to pick up, and what it tells the person about them: one rule for the
// CLI and the extension, from what the store says of each run (its summary, a torn write it cut).

export { isResumableStatus };

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

/** The words a host tells the person when opening a run cut a torn write. */
export function describeTornTailCut(runId: string, cut: TornTailCut): string {
  return (
    `run ${runId}: an unfinished last write (${cut.bytes} bytes at byte ${cut.offset} of ${cut.file}) was cut when the run was opened; ` +
    'it was never acknowledged (power or the process was lost while it was being written)'
  );
}
