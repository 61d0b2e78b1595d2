import { StoreError, type DecisionRecord } from './contract';
import type { JournalStore } from './store';
import { encodeGroup, lastLineOf } from './journal-format';
import { acquireLease, newHolderId } from './lease-policy';
import type { StoredRecord } from './records';
import { appendFactsMoves, pendingAfter, readFactsLog, readRunFacts, writeFactsFile } from './facts-log';
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
    // Keep and Undo move no fact; an accept or a rollback moves pending patches, counted from pending.json
    // (read beside the rest) before the group goes, so the listing row goes with it (one commit where the device can).
    const moves = records.some((r) => r.type === 'patch_state');
    const [state, size, damage, log] = await Promise.all([
      device.readListing(runId),
      device.journalSize(runId),
      readDamage(device, runId),
      moves ? readFactsLog(store, runId, 'pending') : null,
    ]);
    if (!state || size === null || damage || state.journalBytes !== size || state.runId !== runId) return null;
    const now = store.settings.clock.now();
    const stamped = stampRecords(records, state.lastSeq + 1, now);
    const bytes = encodeGroup(stamped);
    const end = size + bytes.length;
    const known = { from: size, end, records: stamped };
    const after = moves ? pendingAfter(log, known) : null;
    const count = moves ? (after?.count ?? null) : (state.pendingPatches ?? null);
    const { v: _v, pendingPatches: _count, ...rest } = state;
    const next = { ...rest, lastSeq: stamped.at(-1)!.seq, journalBytes: end, updatedAt: now };
    try {
      await device.appendGroup(
        runId,
        { bytes, at: size, firstSeq: stamped[0]!.seq },
        lease,
        count !== null ? { ...next, pendingPatches: count } : next,
      );
    } catch (error) {
      await device.truncateJournal(runId, size).catch(() => undefined);
      throw error instanceof StoreError ? error : store.ioError(runId, error);
    } finally {
      await device.closeJournal(runId);
    }
    if (!moves) return stamped;
    const line = lastLineOf(bytes);
    const point = { journalBytes: end, lastLineStart: size + line.start, lastLineCrc: line.crc, lastSeq: stamped.at(-1)!.seq };
    // pending.json follows (a cache): what moved, appended to its log; else the facts read the general way.
    const moved = after !== null && (await appendFactsMoves(store, runId, 'pending', after.moves, point).catch(() => null)) !== null;
    if (moved) return stamped;
    const facts = await readRunFacts(store, runId, known, ['pending']).catch(() => null);
    if (facts) await writeFactsFile(store, runId, facts, point, ['pending']).catch(() => undefined);
    if (count === null && facts)
      await device.writeListing(runId, { ...next, pendingPatches: facts.pending.size }, false).catch(() => undefined);
    return stamped;
  } finally {
    await device.swapLease(runId, { kind: 'held', lease }, null).catch(() => store.abandoned.add(holderId));
  }
}
