import type { RunStatus } from './records';

export interface RetentionPolicy {
  maxBytes?: number;
  maxRuns?: number;
}

export interface RunUsage {
  readonly runId: string;
  readonly status: RunStatus;
  readonly updatedAt: number;
  readonly bytes: number;
  /** Leased by a live writer, damaged, or otherwise not to be touched. */
  readonly protected: boolean;
  /** The blobs it names; null when they are unknown (its journal could not be read). */
  readonly blobs: ReadonlySet<string> | null;
}

const REMOVABLE: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);

/**
 * Which runs to remove: oldest finished runs first, until the count of finished runs (maxRuns)
 * and the bytes (runs plus the blobs still referenced) fit the policy. Running, paused and
 * interrupted runs stay, and do not count against maxRuns: many of them never make the store
 * remove a run as soon as it finishes.
 */
export function planRetention(runs: readonly RunUsage[], blobSizes: ReadonlyMap<string, number>, policy: RetentionPolicy): string[] {
  const referrers = new Map<string, number>();
  for (const run of runs) for (const blob of run.blobs ?? []) referrers.set(blob, (referrers.get(blob) ?? 0) + 1);
  let bytes = runs.reduce((sum, run) => sum + run.bytes, 0);
  for (const blob of referrers.keys()) bytes += blobSizes.get(blob) ?? 0;
  let count = runs.filter((run) => REMOVABLE.has(run.status)).length;
  const candidates = runs.filter((run) => REMOVABLE.has(run.status) && !run.protected).sort((a, b) => a.updatedAt - b.updatedAt);
  const removed: string[] = [];
  for (const run of candidates) {
    const overRuns = policy.maxRuns !== undefined && count > policy.maxRuns;
    const overBytes = policy.maxBytes !== undefined && bytes > policy.maxBytes;
    if (!overRuns && !overBytes) break;
    removed.push(run.runId);
    count--;
    bytes -= run.bytes;
    for (const blob of run.blobs ?? []) {
      const left = (referrers.get(blob) ?? 1) - 1;
      referrers.set(blob, left);
      if (left === 0) bytes -= blobSizes.get(blob) ?? 0;
    }
  }
  return removed;
}
