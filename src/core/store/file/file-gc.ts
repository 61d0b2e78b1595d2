import type { GcResult, RunSummary } from '../contract';
import { acquireLease } from './file-lease';
import type { FileCheckpointStore } from './file-store';
import { isNotFound, joinPath, readdirOrEmpty } from '../fs-port';
import { newHolderId } from '../lease-policy';
import { planRetention, type RetentionPolicy, type RunUsage } from '../retention';
import { readRunFacts, rebuildRunFacts } from './run-facts';
import { JOURNAL } from './run-files';

async function folderBytes(store: FileCheckpointStore, dir: string): Promise<{ names: string[]; bytes: number }> {
  const names = await store.fs.readdir(dir);
  let bytes = 0;
  for (const name of names) bytes += (await store.fs.stat(joinPath(dir, name)))?.size ?? 0;
  return { names, bytes };
}

/**
 * What one run uses (null: no journal), with the runs it stands on (a fork's parents). Its blob
 * references come with its facts (refs.json and the journal after it; the whole journal only
 * when that cache does not hold and no writer holds the run). A run whose facts are not known is
 * protected, and its blob references are unknown.
 */
async function usageOf(
  store: FileCheckpointStore,
  runId: string,
  summary: RunSummary | undefined,
): Promise<(RunUsage & { standsOn: string[] }) | null> {
  const dir = store.runDir(runId);
  if (!(await store.fs.stat(joinPath(dir, JOURNAL)))) return null;
  const { bytes } = await folderBytes(store, dir);
  const known = await readRunFacts(store, runId, undefined, ['refs']).catch(() => null);
  const facts = known ?? (summary && !summary.leased ? await rebuildRunFacts(store, runId).catch(() => null) : null);
  const removable = summary !== undefined && facts !== null && !summary.leased && summary.damaged === undefined;
  const status = summary?.status ?? 'interrupted';
  return {
    runId,
    status,
    updatedAt: summary?.updatedAt ?? 0,
    bytes,
    protected: !removable,
    blobs: facts?.blobs ?? null,
    standsOn: facts ? [...facts.runs] : summary?.parent ? [summary.parent.runId] : [],
  };
}

/** Removes a run folder while holding its lease, journal first, so a half-removed run is never listed. */
async function removeRun(store: FileCheckpointStore, runId: string): Promise<number> {
  const dir = store.runDir(runId);
  await acquireLease(store.leaseContext(runId), newHolderId(), store.abandoned);
  const { names, bytes } = await folderBytes(store, dir);
  for (const name of [JOURNAL, ...names.filter((n) => n !== JOURNAL)]) {
    await store.fs.unlink(joinPath(dir, name)).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }
  await store.fs.rmdir(dir);
  await store.fs.syncDir(store.runsDir);
  return bytes;
}

export async function collectFileGarbage(store: FileCheckpointStore, policy: RetentionPolicy): Promise<GcResult> {
  const names = await readdirOrEmpty(store.fs, store.runsDir);
  const summaries = new Map((await store.listRuns()).map((s) => [s.runId, s]));
  let usages: RunUsage[] = [];
  const standOn = new Set<string>();
  let allRefsKnown = true;
  for (const name of names) {
    const usage = await usageOf(store, name, summaries.get(name)).catch(() => undefined);
    if (usage) usages.push(usage);
    usage?.standsOn.forEach((runId) => standOn.add(runId));
    if (usage === undefined || usage?.blobs === null) allRefsKnown = false; // its blobs may be named
  }
  // A run a fork stands on stays while the fork does.
  usages = usages.map((usage) => (standOn.has(usage.runId) ? { ...usage, protected: true } : usage));
  const blobs = await store.blobs.list();
  const result: GcResult = { removedRuns: [], removedBlobs: 0, freedBytes: 0 };
  for (const runId of planRetention(usages, new Map(blobs.map((b) => [b.hash, b.size])), policy)) {
    try {
      result.freedBytes += await removeRun(store, runId);
      result.removedRuns.push(runId);
    } catch {
      allRefsKnown = false; // a run we could not remove keeps its blobs
    }
  }
  if (!allRefsKnown) return result;
  const removed = new Set(result.removedRuns);
  const referenced = new Set(usages.filter((u) => !removed.has(u.runId)).flatMap((u) => [...u.blobs!]));
  const now = store.clock.now();
  for (const blob of blobs) {
    if (referenced.has(blob.hash) || now - blob.mtimeMs < store.blobGraceMs) continue;
    await store.blobs.remove(blob.hash);
    result.removedBlobs++;
    result.freedBytes += blob.size;
  }
  return result;
}
