import { StoreError, type DecisionRecord } from '../contract';
import { acquireLease, checkHolder, releaseLease } from './file-lease';
import type { FileCheckpointStore } from './file-store';
import { pendingAfter } from '../listing-facts';
import { encodeGroup } from '../journal-format';
import { newHolderId } from '../lease-policy';
import type { StoredRecord } from '../records';
import { joinPath } from '../fs-port';
import { readDamageFile, readStateFile, STATE, stateFileBytes, type RunStateFile } from './run-files';
import { tempName } from '../atomic-file';
import { stampRecords } from '../stamp';

/**
 * The light path of a person's decisions: under a lease of its own, one commit group is appended
 * after the journal end state.json states, and state.json moves on with it. Nothing of the
 * journal is read. Null (nothing written) when state.json does not match the journal (a crash
 * left it behind) or the run is damaged: the caller then takes the full writer path.
 */
export async function appendFileDecisions(
  store: FileCheckpointStore,
  runId: string,
  records: readonly DecisionRecord[],
): Promise<readonly StoredRecord[] | null> {
  const ctx = store.leaseContext(runId);
  const journal = store.journalPath(runId);
  const holderId = newHolderId();
  const lease = await acquireLease(ctx, holderId, store.abandoned);
  try {
    const [state, stat, damage] = await Promise.all([
      readStateFile(store.fs, ctx.runDir),
      store.fs.stat(journal),
      readDamageFile(store.fs, ctx.runDir),
    ]);
    if (!state || !stat || damage || state.journalBytes !== stat.size || state.runId !== runId) return null;
    const now = store.clock.now();
    const stamped = stampRecords(records, state.lastSeq + 1, now);
    const bytes = encodeGroup(stamped);
    store.appends.wrote(runId, stat.size + bytes.length);
    const handle = await store.fs.openAppend(journal);
    try {
      await checkHolder(ctx, holderId, lease.generation);
      await store.fs.write(handle, bytes);
      await store.fs.sync(handle);
    } catch (error) {
      await store.fs.truncate(journal, stat.size).catch(() => undefined);
      throw error instanceof StoreError ? error : new StoreError(`store I/O failed on ${journal}: ${String(error)}`, 'io', journal);
    } finally {
      await store.fs.close(handle).catch(() => undefined);
    }
    const { v: _v, ...rest } = state;
    const pendingPatches = state.pendingPatches && pendingAfter(state.pendingPatches, stamped);
    // A listing cache, replaced without fsyncs: the journal is the truth, and a state file lost or
    // left behind by a crash sends the next decision the full way (a writer then rewrites it).
    await replaceUnsynced(store, ctx.runDir, {
      ...rest,
      lastSeq: stamped.at(-1)!.seq,
      journalBytes: stat.size + bytes.length,
      updatedAt: now,
      ...(pendingPatches ? { pendingPatches } : {}),
    }).catch(() => undefined);
    return stamped;
  } finally {
    await releaseLease(ctx, holderId).catch(() => store.abandoned.add(holderId));
  }
}

async function replaceUnsynced(store: FileCheckpointStore, dir: string, state: Omit<RunStateFile, 'v'>): Promise<void> {
  const temp = joinPath(dir, tempName());
  const handle = await store.fs.openExclusive(temp);
  try {
    await store.fs.write(handle, stateFileBytes(state));
  } finally {
    await store.fs.close(handle);
  }
  await store.fs.rename(temp, joinPath(dir, STATE)).catch((error: unknown) => store.fs.unlink(temp).finally(() => Promise.reject(error)));
}
