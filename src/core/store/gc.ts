import type { GcResult, RunSummary } from './contract';
import type { JournalStore } from './store';
import { acquireLease, newHolderId } from './lease-policy';
import { planRetention, type RetentionPolicy, type RunUsage } from './retention';
import { readRunFacts, rebuildRunFacts } from './facts-log';

/**
 * What one run uses, with the runs it stands on (a fork's parents). Its blob references come with
 * its facts (refs.json and the journal after it; the whole journal only when that cache does not
 * hold and no writer holds the run). A run whose facts are not known is protected, and its blob
 * references are unknown.
 */
async function usageOf(store: JournalStore, summary: RunSummary): Promise<RunUsage & { standsOn: string[] }> {
  const { runId } = summary;
  const bytes = await store.device.runBytes(runId);
  const known = await readRunFacts(store, runId, undefined, ['refs']).catch(() => null);
  const facts = known ?? (!summary.leased ? await rebuildRunFacts(store, runId).catch(() => null) : null);
  const removable = facts !== null && !summary.leased && summary.damaged === undefined;
  return {
    runId,
    status: summary.status,
    updatedAt: summary.updatedAt,
    bytes,
    protected: !removable,
    blobs: facts?.blobs ?? null,
    standsOn: facts ? [...facts.runs] : summary.parent ? [summary.parent.runId] : [],
  };
}

/** Retention over the listing (live, damaged and forked-from runs are kept), then blobs no run names, past their grace. */
export async function collectGarbage(store: JournalStore, policy: RetentionPolicy): Promise<GcResult> {
  const found: Array<Awaited<ReturnType<typeof usageOf>> | undefined> = [];
  for (const summary of await store.listRuns()) found.push(await usageOf(store, summary).catch(() => undefined));
  // A run not read, or whose blob references are not known, may name any blob.
  let allRefsKnown = found.every((usage) => usage !== undefined && usage.blobs !== null);
  const standOn = new Set(found.flatMap((usage) => usage?.standsOn ?? []));
  // A run a fork stands on stays while the fork does.
  const usages = found.flatMap((usage) => (usage ? [{ ...usage, protected: usage.protected || standOn.has(usage.runId) }] : []));
  const blobs = await store.device.listBlobs();
  const result: GcResult = { removedRuns: [], removedBlobs: 0, freedBytes: 0 };
  for (const runId of planRetention(usages, new Map(blobs.map((b) => [b.hash, b.size])), policy)) {
    try {
      // Removed while holding its lease: a writer that opened it since keeps it.
      await acquireLease(store.lease, runId, newHolderId());
      const bytes = await store.device.runBytes(runId);
      await store.device.removeRun(runId);
      result.freedBytes += bytes;
      result.removedRuns.push(runId);
    } catch {
      allRefsKnown = false; // a run we could not remove keeps its blobs
    }
  }
  if (!allRefsKnown) return result;
  const removed = new Set(result.removedRuns);
  const referenced = new Set(usages.filter((u) => !removed.has(u.runId)).flatMap((u) => [...u.blobs!]));
  const now = store.settings.clock.now();
  for (const blob of blobs) {
    if (referenced.has(blob.hash) || now - blob.putAt < store.settings.blobGraceMs) continue;
    await store.device.removeBlob(blob.hash);
    result.removedBlobs++;
    result.freedBytes += blob.size;
  }
  return result;
}
