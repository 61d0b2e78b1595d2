import { StoreError, type DecisionRecord } from '../contract';
import { acquireLease, checkHolder, releaseLease } from './file-lease';
import type { FileCheckpointStore } from './file-store';
import { encodeGroup, lastLineOf } from '../journal-format';
import { newHolderId } from '../lease-policy';
import type { StoredRecord } from '../records';
import { movePending, readRunFacts, writeFactsFile } from './run-facts';
import { readDamageFile, readStateFile, STATE, stateFileBytes } from './run-files';
import { replaceFileUnsynced } from '../atomic-file';
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
    const end = stat.size + bytes.length;
    // Keep and Undo move no fact; an accept or a rollback moves pending patches: pending.json (with
    // the journal after it) tells which, and is written anew at the journal's end.
    let pendingPatches = state.pendingPatches;
    if (stamped.some((r) => r.type === 'patch_state')) {
      const known = { from: stat.size, end, records: stamped };
      const line = lastLineOf(bytes);
      const point = { journalBytes: end, lastLineStart: stat.size + line.start, lastLineCrc: line.crc, lastSeq: stamped.at(-1)!.seq };
      pendingPatches = (await movePending(store, runId, known, point).catch(() => null)) ?? undefined;
      if (pendingPatches === undefined) {
        const facts = await readRunFacts(store, runId, known, ['pending']).catch(() => null);
        pendingPatches = facts?.pending.size;
        if (facts) await writeFactsFile(store, runId, facts, point, ['pending']).catch(() => undefined);
      }
    }
    const { v: _v, pendingPatches: _count, ...rest } = state;
    const next = { ...rest, lastSeq: stamped.at(-1)!.seq, journalBytes: end, updatedAt: now };
    // A listing cache, replaced without fsyncs: the journal is the truth, and a state file lost or
    // left behind by a crash sends the next decision the full way (a writer then rewrites it).
    await replaceFileUnsynced(
      store.fs,
      ctx.runDir,
      STATE,
      stateFileBytes(pendingPatches !== undefined ? { ...next, pendingPatches } : next),
    ).catch(() => undefined);
    return stamped;
  } finally {
    await releaseLease(ctx, holderId).catch(() => store.abandoned.add(holderId));
  }
}
