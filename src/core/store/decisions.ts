import { StoreError, type DecisionRecord } from './contract';
import { acquireLease, releaseLease } from './lease';
import type { JournalStore } from './store';
import { encodeGroup, lastLineOf } from './journal-format';
import { newHolderId } from './lease-policy';
import type { StoredRecord } from './records';
import { movePending, readRunFacts, writeFactsFile } from './facts-log';
import { readDamage } from './listing-row';
import { stampRecords } from './stamp';

/**
 * The light path of a person's decisions: under a lease of its own, one commit group is appended
 * after the journal end the listing row states, and the row moves on with it. Nothing of the
 * journal is read. Null (nothing written) when the row does not match the journal (a crash left
 * it behind) or the run is damaged: the caller then takes the full writer path.
 */
export async function appendDecisions(
  store: JournalStore,
  runId: string,
  records: readonly DecisionRecord[],
): Promise<readonly StoredRecord[] | null> {
  const { device } = store;
  const holderId = newHolderId();
  const lease = await acquireLease(store.lease, runId, holderId);
  try {
    const [state, size, damage] = await Promise.all([device.readListing(runId), device.journalSize(runId), readDamage(device, runId)]);
    if (!state || size === null || damage || state.journalBytes !== size || state.runId !== runId) return null;
    const now = store.clock.now();
    const stamped = stampRecords(records, state.lastSeq + 1, now);
    const bytes = encodeGroup(stamped);
    const end = size + bytes.length;
    const { v: _v, pendingPatches: _count, ...rest } = state;
    const next = { ...rest, lastSeq: stamped.at(-1)!.seq, journalBytes: end, updatedAt: now };
    // Keep and Undo move no fact: the listing row goes with the group (one commit where the device can).
    const moves = stamped.some((r) => r.type === 'patch_state');
    const withGroup = moves ? undefined : state.pendingPatches !== undefined ? { ...next, pendingPatches: state.pendingPatches } : next;
    try {
      await device.appendGroup(runId, { bytes, at: size, firstSeq: stamped[0]!.seq }, lease, withGroup);
    } catch (error) {
      await device.truncateJournal(runId, size).catch(() => undefined);
      throw error instanceof StoreError ? error : store.ioError(runId, error);
    } finally {
      await device.closeJournal(runId);
    }
    if (!moves) return stamped;
    // An accept or a rollback moves pending patches: pending.json (with the journal after it) tells
    // which, and is written anew at the journal's end.
    const known = { from: size, end, records: stamped };
    const line = lastLineOf(bytes);
    const point = { journalBytes: end, lastLineStart: size + line.start, lastLineCrc: line.crc, lastSeq: stamped.at(-1)!.seq };
    let pendingPatches = (await movePending(store, runId, known, point).catch(() => null)) ?? undefined;
    if (pendingPatches === undefined) {
      const facts = await readRunFacts(store, runId, known, ['pending']).catch(() => null);
      pendingPatches = facts?.pending.size;
      if (facts) await writeFactsFile(store, runId, facts, point, ['pending']).catch(() => undefined);
    }
    // A listing cache, written without syncs: the journal is the truth, and a row lost or left
    // behind by a crash sends the next decision the full way (a writer then rewrites it).
    await device.writeListing(runId, pendingPatches !== undefined ? { ...next, pendingPatches } : next, false).catch(() => undefined);
    return stamped;
  } finally {
    await releaseLease(store.lease, runId, holderId).catch(() => store.abandoned.add(holderId));
  }
}
