import type { RunSummary } from './contract';
import { acquireLease } from './file-lease';
import type { FileCheckpointStore } from './file-store';
import { isNotFound, joinPath } from './fs-port';
import { newHolderId } from './lease-policy';
import { readSnapshot, snapshotNames } from './file-snapshots';
import { blobRefs, snapshotBlobRefs } from './refs';
import { planRetention, type RetentionPolicy, type RunUsage } from './retention';
import { JOURNAL, readStateFile } from './run-files';

interface GcResult {
  removedRuns: string[];
  removedBlobs: number;
  freedBytes: number;
}

async function folderBytes(store: FileCheckpointStore, dir: string): Promise<{ names: string[]; bytes: number }> {
  const names = await store.fs.readdir(dir);
  let bytes = 0;
  for (const name of names) bytes += (await store.fs.stat(joinPath(dir, name)))?.size ?? 0;
  return { names, bytes };
}

/** What one run uses; a run we cannot read is protected and makes its blob references unknown. */
async function usageOf(
  store: FileCheckpointStore,
  runId: string,
  summary: RunSummary | undefined,
): Promise<{ usage: RunUsage; refsKnown: boolean } | null> {
  const dir = store.runDir(runId);
  const journal = joinPath(dir, JOURNAL);
  if (!(await store.fs.stat(journal))) return null;
  const { bytes } = await folderBytes(store, dir);
  const state = await readStateFile(store.fs, dir);
  try {
    const records = await store.readRecords(runId);
    const blobs = new Set(records.flatMap(blobRefs));
    // A snapshot names only what the journal does, but its schema, not that rule, is what is read.
    for (const name of await snapshotNames(store.fs, dir)) {
      const snapshot = await readSnapshot(store.fs, dir, name);
      for (const hash of snapshot ? snapshotBlobRefs(snapshot) : []) blobs.add(hash);
    }
    const usage: RunUsage = {
      runId,
      status: state?.status ?? summary?.status ?? 'interrupted',
      updatedAt: state?.updatedAt ?? summary?.updatedAt ?? 0,
      bytes,
      protected: !state || (summary?.leased ?? true) || summary?.damaged !== undefined,
      blobs,
    };
    return { usage, refsKnown: true };
  } catch {
    return { usage: { runId, status: 'interrupted', updatedAt: 0, bytes, protected: true, blobs: new Set() }, refsKnown: false };
  }
}

/** Removes a run folder while holding its lease, journal first, so a half-removed run is never listed. */
async function removeRun(store: FileCheckpointStore, runId: string): Promise<number> {
  const dir = store.runDir(runId);
  await acquireLease(store.leaseContext(runId), newHolderId(), store.abandoned);
  const { names, bytes } = await folderBytes(store, dir);
  const ordered = [JOURNAL, ...names.filter((n) => n !== JOURNAL)];
  for (const name of ordered) {
    await store.fs.unlink(joinPath(dir, name)).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }
  await store.fs.rmdir(dir);
  await store.fs.syncDir(store.runsDir);
  return bytes;
}

export async function collectFileGarbage(store: FileCheckpointStore, policy: RetentionPolicy): Promise<GcResult> {
  let names: string[];
  try {
    names = await store.fs.readdir(store.runsDir);
  } catch (error) {
    if (isNotFound(error)) names = [];
    else throw error;
  }
  const summaries = new Map((await store.listRuns()).map((s) => [s.runId, s]));
  const usages: RunUsage[] = [];
  let allRefsKnown = true;
  for (const name of names) {
    let found: Awaited<ReturnType<typeof usageOf>>;
    try {
      found = await usageOf(store, name, summaries.get(name));
    } catch {
      allRefsKnown = false;
      continue;
    }
    if (!found) continue;
    usages.push(found.usage);
    allRefsKnown &&= found.refsKnown;
  }
  const blobs = await store.blobs.list();
  const sizes = new Map(blobs.map((b) => [b.hash, b.size]));
  const result: GcResult = { removedRuns: [], removedBlobs: 0, freedBytes: 0 };
  for (const runId of planRetention(usages, sizes, policy)) {
    try {
      result.freedBytes += await removeRun(store, runId);
      result.removedRuns.push(runId);
    } catch {
      allRefsKnown = false; // a run we could not remove keeps its blobs
    }
  }
  if (!allRefsKnown) return result;
  const removed = new Set(result.removedRuns);
  const referenced = new Set(usages.filter((u) => !removed.has(u.runId)).flatMap((u) => [...u.blobs]));
  const now = store.clock.now();
  for (const blob of blobs) {
    if (referenced.has(blob.hash) || now - blob.mtimeMs < store.blobGraceMs) continue;
    await store.blobs.remove(blob.hash);
    result.removedBlobs++;
    result.freedBytes += blob.size;
  }
  return result;
}
