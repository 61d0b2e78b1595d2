import { StoreError, type LeaseInfo, type RunWriter, type TornTailCut } from './contract';
import type { NewListingRow } from './device';
import { FactsWriter, pointAt, readRunFacts, rebuildRunFacts, writeFactsFile } from './facts-log';
import { foldFromResumeState, foldTail, type FoldState } from './fold';
import { encodeGroup, lastLineOf } from './journal-format';
import { leaseNeedsRenewal, releaseLease, renewIntervalMs, renewLease } from './lease-policy';
import { factsOfRun } from './listing-facts';
import { factsChanged, listingOf, sameListing } from './listing-row';
import type { NewRecord, StoredRecord } from './records';
import { blobRefs } from './refs';
import { resumeStateOf, type ResumeState } from './resume-state';
import { rememberLines, writeSnapshot, type RecordLines } from './snapshots';
import { stampRecords } from './stamp';
import type { JournalStore, OpenedRun } from './store';

// The writer of one run, written once over the journal device: a serialised queue of appends and
// renewals, the lease heartbeat, fencing (every append is refused unless the writer's holder and
// generation still hold the lease), the fold kept as records are appended, the listing row, the
// snapshot cadence and the facts logs.

/** A writer that closes writes a snapshot when the journal after the newest one holds at least this much. */
const CLOSE_SNAPSHOT_BYTES = 64 << 10;

/**
 * The writer of a run just opened (or created) under a new lease: the listing row brought up to
 * date first, with the facts a writer keeps (from a whole fold, else pending.json with the journal
 * after it, rebuilt from the whole journal when it does not hold). A resume needs the pending
 * count, not the run's blob references: the writer reads refs.json only when it first writes it.
 */
export async function startWriter(
  store: JournalStore,
  holderId: string,
  lease: LeaseInfo,
  opened: OpenedRun,
  cut?: TornTailCut,
): Promise<RunWriter> {
  const { fold, scan } = opened;
  const runId = fold.run.runId;
  const stored = await store.device.readListing(runId);
  await store.pause?.();
  // The time of the last record: the listing's when it stands at that record (a snapshot does not carry it).
  const current = stored?.lastSeq === fold.lastSeq ? stored.updatedAt : undefined;
  const updatedAt = scan.records.at(-1)?.at ?? current ?? fold.latestCheckpoint?.at ?? fold.run.at;
  const tornTailCut = cut ? { offset: cut.offset, bytes: cut.bytes, at: store.settings.clock.now() } : stored?.tornTailCut;
  const known = { from: opened.snapshotAt, end: scan.goodLength, records: scan.records };
  const whole = opened.snapshotAt === 0;
  const pending = whole ? null : await readRunFacts(store, runId, known, ['pending']).catch(() => null);
  const read = whole || pending ? null : await readRunFacts(store, runId, known);
  const facts = whole ? factsOfRun(fold, scan.records) : (pending ?? read ?? (await rebuildRunFacts(store, runId)));
  await store.pause?.();
  // Its readers (GC while the run goes on) then fold only the journal after this point.
  if (whole) await writeFactsFile(store, runId, facts, await pointAt(store, runId, scan.goodLength, fold.lastSeq)).catch(() => undefined);
  const row = listingOf(fold, scan.goodLength, updatedAt, tornTailCut, facts.pending.size);
  // A writer that closed cleanly left the listing current: rewriting it would only cost a write.
  if (!sameListing(stored, row)) await store.device.writeListing(runId, row, true);
  return new StoreRunWriter(store, holderId, lease, opened, row, new FactsWriter(store, runId, facts, whole || pending === null), cut);
}

/** Appends commit groups to one run while it holds the run's lease. */
export class StoreRunWriter implements RunWriter {
  readonly runId: string;
  readonly resumeState: ResumeState;
  private fold: FoldState;
  private lastSeq: number;
  private journalBytes: number;
  private snapshotAt: number;
  /** The size of the newest snapshot this writer wrote when it copied items: the next waits for at least as much journal. */
  private snapshotBytes = 0;
  private stopped: StoreError | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private heartbeat: { stop(): void } | undefined;
  private rowWrittenAt: number;
  private rowDirty = false;
  /** Where the last line appended starts, and its checksum (a snapshot names it). */
  private lastLine: { start: number; crc: string } | undefined;
  /** The journal lines of the fold's messages and ledger entries, which its snapshots name instead of copying them. */
  private lines: RecordLines;

  constructor(
    private readonly store: JournalStore,
    readonly holderId: string,
    private lease: LeaseInfo,
    opened: OpenedRun,
    /** The listing row now (its lastSeq and journalBytes are where the writer starts). */
    private row: NewListingRow,
    private readonly facts: FactsWriter,
    readonly tornTailCut?: TornTailCut,
  ) {
    this.runId = row.runId;
    this.resumeState = resumeStateOf(opened.fold);
    // Its own copy: the state handed out stays what it was at open while appends fold in.
    this.fold = foldFromResumeState(this.resumeState);
    this.lastSeq = row.lastSeq;
    this.journalBytes = row.journalBytes;
    this.snapshotAt = opened.snapshotAt;
    this.lines = opened.lines ?? new WeakMap();
    this.rowWrittenAt = store.settings.clock.now();
    const every = renewIntervalMs(store.settings.leaseTimeoutMs);
    this.heartbeat = store.settings.timers?.every(every, () => this.renewLease().catch(() => undefined));
  }

  append(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    return this.serialised(() => this.appendNow(records));
  }

  /** Also called by the heartbeat timer: in the same queue as appends, so a renewal never splits an append's check from its write. */
  renewLease(): Promise<void> {
    return this.serialised(() => this.renew());
  }

  private async renew(): Promise<void> {
    if (this.stopped) throw this.stopped;
    this.lease = await this.guard(() => renewLease(this.store.lease, this.runId, this.lease), false);
  }

  close(): Promise<void> {
    return this.serialised(async () => {
      if (!this.stopped) {
        this.stop(new StoreError('this writer is closed', 'lease_lost'));
        try {
          // A resume after a clean stop then reads no journal, only what a snapshot of its live context holds.
          if (this.journalBytes - this.snapshotAt >= CLOSE_SNAPSHOT_BYTES) await this.snapshot(false);
          if (this.lastLine) await this.facts.write(this.point(this.lastLine), true);
          if (this.rowDirty) await this.writeRow();
          await releaseLease(this.store.lease, this.runId, this.holderId);
        } catch {
          this.store.abandoned.add(this.holderId);
        }
      }
      await this.store.device.closeJournal(this.runId);
    });
  }

  /** Appends run one at a time, in call order. */
  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async appendNow(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    if (this.stopped) throw this.stopped;
    if (records.length === 0) return [];
    const now = this.store.settings.clock.now();
    const stamped = stampRecords(records, this.lastSeq + 1, now);
    await this.checkBlobs(stamped);
    // A branch needs the whole journal: read once the group is durable.
    const rereadAfter = !(await foldTail(this.fold, stamped));
    const bytes = encodeGroup(stamped);
    const at = this.journalBytes;
    this.facts.add(stamped);
    const next = listingOf(this.fold, at + bytes.length, now, this.row.tornTailCut, this.facts.facts.pending.size);
    // The listing row goes with the group when it is due (in one commit where the device can); after a branch, once the run is read again.
    const due = !rereadAfter && this.rowDue(now, next);
    const group = { bytes, at, firstSeq: stamped[0]!.seq };
    this.lease = await this.guard(() => this.store.device.appendGroup(this.runId, group, this.lease, due ? next : undefined), true);
    [this.lastSeq, this.journalBytes] = [stamped.at(-1)!.seq, at + bytes.length];
    if (!rereadAfter) [this.row, this.rowDirty] = [next, !due];
    if (due) this.rowWrittenAt = now;
    // The records are durable: a failed renewal here only stops the writer (lease lost) or waits for the next one.
    if (leaseNeedsRenewal(this.lease, now, this.store.settings.leaseTimeoutMs)) await this.renew().catch(() => undefined);
    if (rereadAfter) await this.reread(now);
    const line = lastLineOf(bytes);
    this.lastLine = { start: at + line.start, crc: line.crc };
    rememberLines(this.lines, bytes, at, stamped);
    const compacted = stamped.some((record) => record.type === 'compaction');
    // A snapshot copying items it cannot name (a fork's ancestors') waits for as much journal as it holds.
    if (compacted || this.journalBytes - this.snapshotAt >= Math.max(this.store.settings.snapshotStepBytes, this.snapshotBytes))
      await this.snapshot(compacted);
    return stamped;
  }

  /** After a branch record: the run read again (the fold needs the records before it), and its listing row with it. */
  private async reread(now: number): Promise<void> {
    const opened = await this.store.openRun(this.runId);
    this.lines = opened.lines ?? new WeakMap();
    this.fold = foldFromResumeState(resumeStateOf(opened.fold));
    const next = listingOf(this.fold, this.journalBytes, now, this.row.tornTailCut, this.facts.facts.pending.size);
    const due = this.rowDue(now, next);
    [this.row, this.rowDirty] = [next, true];
    if (due) await this.writeRow().catch(() => undefined);
  }

  private async checkBlobs(records: readonly StoredRecord[]): Promise<void> {
    const refs = [...new Set(records.flatMap(blobRefs))];
    if (refs.length === 0) return;
    const missing = await this.guard(() => this.store.device.missingBlobs(refs), false);
    if (missing.length > 0) throw new StoreError(`record names blob ${missing[0]} that is not in the store`, 'invalid');
  }

  /** The listing row is a cache: rewritten when the status, step or a fact changes, else at most every interval. */
  private rowDue(now: number, next: NewListingRow): boolean {
    const changed = this.row.status !== next.status || this.row.steps !== next.steps || factsChanged(this.row, next);
    return changed || now - this.rowWrittenAt >= this.store.settings.stateIntervalMs;
  }

  private async writeRow(): Promise<void> {
    await this.store.device.writeListing(this.runId, this.row, true);
    this.rowDirty = false;
    this.rowWrittenAt = this.store.settings.clock.now();
  }

  private point(line: { start: number; crc: string }) {
    return { journalBytes: this.journalBytes, lastLineStart: line.start, lastLineCrc: line.crc, lastSeq: this.lastSeq };
  }

  /** A state snapshot of the journal up to the end of its last group, then the facts logs at that point; a failure only leaves the older ones (the journal stays the truth). */
  private async snapshot(compacted: boolean): Promise<void> {
    const line = this.lastLine;
    if (!line) return;
    try {
      const position = { journalBytes: this.journalBytes, lastLineStart: line.start, lastLineCrc: line.crc };
      this.snapshotBytes = await writeSnapshot(this.store.device, this.fold, position, this.lines, this.store.settings.forkSpan);
      this.snapshotAt = this.journalBytes;
      await this.facts.write(this.point(line), compacted);
    } catch {
      // the next one is tried after the next step of journal
    }
  }

  /**
   * Runs one device step. A lost lease stops the writer; so does a failure of the device's own
   * ('io': a server gone, a disk error), and any failure when `fatal` (bytes may be half written:
   * the journal is cut back to its last known end).
   */
  private async guard<T>(step: () => Promise<T>, fatal: boolean): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof StoreError && error.code === 'lease_lost') {
        // A writer that lost its lease never writes again: what it holds goes now, not at its owner's close().
        this.stop(error);
        await this.store.device.closeJournal(this.runId);
        throw error;
      }
      if (error instanceof StoreError && error.code !== 'io') throw error;
      const failure = error instanceof StoreError ? error : this.store.ioError(this.runId, error);
      if (fatal || error instanceof StoreError) {
        this.stop(failure);
        await this.store.device.closeJournal(this.runId);
        await this.store.device.truncateJournal(this.runId, this.journalBytes).catch(() => undefined);
        this.store.abandoned.add(this.holderId);
      }
      throw failure;
    }
  }

  private stop(error: StoreError): void {
    if (!this.stopped) this.stopped = error;
    this.heartbeat?.stop();
    this.heartbeat = undefined;
  }
}
