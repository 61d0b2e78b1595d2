import type { Clock, Timers } from '../ports';
import { StoreError, type LeaseInfo, type RunWriter, type TornTailCut } from './contract';
import { foldFromResumeState, foldTail, type FoldState } from './fold';
import { encodeGroup } from './journal-format';
import { leaseNeedsRenewal, renewIntervalMs } from './lease-policy';
import type { NewRecord, StoredRecord } from './records';
import { blobRefs } from './refs';
import { resumeStateOf, type ResumeState } from './resume-state';
import { stampRecords } from './stamp';

// The writer of one run, written once over the device that holds the run (the writer's half of
// the journal device port): a serialised queue of appends and renewals, the lease heartbeat,
// fencing (every append is refused unless the writer's holder and generation still hold the
// lease), the fold kept as records are appended, and the snapshot cadence. What a device does
// beyond its primitives (a file store's listing file and facts logs) it does in `appended`.

/** A writer that closes writes a snapshot when the journal after the newest one holds at least this much. */
const CLOSE_SNAPSHOT_BYTES = 64 << 10;

/** One commit group on its way to a device: its records, their journal bytes, and where the journal ended before it. */
export interface AppendGroup {
  readonly records: readonly StoredRecord[];
  readonly bytes: Uint8Array;
  /** The journal's bytes before the group. */
  readonly journalBytes: number;
  readonly now: number;
  /** The run's state with the group folded in. */
  readonly fold: FoldState;
}

/** What a device does for one writer of one run. Failures of its own I/O it throws as they come (the writer names them). */
export interface WriterDevice {
  readonly clock: Clock;
  readonly timers: Timers | undefined;
  readonly leaseTimeoutMs: number;
  /** A snapshot is written once the journal after the newest one holds this much. */
  readonly snapshotStepBytes: number;
  /** The blobs among `hashes` that the store does not hold. */
  missingBlobs(hashes: readonly string[]): Promise<readonly string[]>;
  /** Appends the group durably, only while `lease` (holder and generation) still holds the run; else lease_lost, nothing appended. Gives the lease after. */
  appendGroup(group: AppendGroup, lease: LeaseInfo): Promise<LeaseInfo>;
  /** Renews the lease if it is still this one (holder and generation), else lease_lost. */
  renewLease(lease: LeaseInfo): Promise<LeaseInfo>;
  /** After a durable group: what the device keeps of the run beyond its journal. Never throws for it. */
  appended(group: AppendGroup): Promise<void>;
  /** A snapshot of `fold` at the journal's end; the bytes it copied (the next waits for as much journal), null when none was written. */
  putSnapshot(fold: FoldState, at: { journalBytes: number; compacted: boolean }): Promise<number | null>;
  /** The run read again after its last group (a branch record needs the records before it). */
  reopen(): Promise<FoldState>;
  /** A clean close: what the device writes last, then the lease released. */
  release(lease: LeaseInfo): Promise<void>;
  /** A failed write: the journal back to its last known end, `journalBytes`. */
  cutBack(journalBytes: number): Promise<void>;
  /** This process knows the writer's holder is gone: it may open the run again at once. */
  abandon(): void;
  /** The writer stopped: what it held open is let go. */
  closeHandle(): Promise<void>;
  /** A failure of the device's I/O, as the writer throws it. */
  ioError(error: unknown): StoreError;
}

/** Where a writer starts: the run's state and the journal's end. */
export interface WriterStart {
  readonly fold: FoldState;
  readonly lastSeq: number;
  readonly journalBytes: number;
  /** The journal bytes the newest snapshot covers (0: none). */
  readonly snapshotAt: number;
}

/** Appends commit groups to one run while it holds the run's lease. */
export class StoreRunWriter implements RunWriter {
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

  constructor(
    private readonly device: WriterDevice,
    readonly runId: string,
    readonly holderId: string,
    private lease: LeaseInfo,
    start: WriterStart,
    readonly tornTailCut?: TornTailCut,
  ) {
    this.resumeState = resumeStateOf(start.fold);
    // Its own copy: the state handed out stays what it was at open while appends fold in.
    this.fold = foldFromResumeState(this.resumeState);
    this.lastSeq = start.lastSeq;
    this.journalBytes = start.journalBytes;
    this.snapshotAt = start.snapshotAt;
    const every = renewIntervalMs(device.leaseTimeoutMs);
    this.heartbeat = device.timers?.every(every, () => this.renewLease().catch(() => undefined));
  }

  append(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    return this.serialised(() => this.appendNow(records));
  }

  /** Also called by the heartbeat timer: in the same queue as appends, so a renewal never splits an append's check from its write. */
  renewLease(): Promise<void> {
    return this.serialised(async () => {
      if (this.stopped) throw this.stopped;
      this.lease = await this.guard(() => this.device.renewLease(this.lease), false);
    });
  }

  close(): Promise<void> {
    return this.serialised(async () => {
      if (!this.stopped) {
        this.stop(new StoreError('this writer is closed', 'lease_lost'));
        try {
          // A resume after a clean stop then reads no journal, only what a snapshot of its live context holds.
          if (this.journalBytes - this.snapshotAt >= CLOSE_SNAPSHOT_BYTES) await this.snapshot(false);
          await this.device.release(this.lease);
        } catch {
          this.device.abandon();
        }
      }
      await this.device.closeHandle();
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
    const now = this.device.clock.now();
    const stamped = stampRecords(records, this.lastSeq + 1, now);
    await this.checkBlobs(stamped);
    // A branch needs the whole journal: read once the group is durable.
    const rereadAfter = !(await foldTail(this.fold, stamped));
    const group: AppendGroup = { records: stamped, bytes: encodeGroup(stamped), journalBytes: this.journalBytes, now, fold: this.fold };
    this.lease = await this.guard(() => this.device.appendGroup(group, this.lease), true);
    this.lastSeq = stamped.at(-1)!.seq;
    this.journalBytes += group.bytes.length;
    // The records are durable: a failed renewal here only stops the writer (lease lost) or waits for the next one.
    if (leaseNeedsRenewal(this.lease, now, this.device.leaseTimeoutMs)) {
      await this.guard(() => this.device.renewLease(this.lease), false).then(
        (renewed) => (this.lease = renewed),
        () => undefined,
      );
    }
    if (rereadAfter) this.fold = foldFromResumeState(resumeStateOf(await this.device.reopen()));
    await this.device.appended({ ...group, fold: this.fold });
    const compacted = stamped.some((record) => record.type === 'compaction');
    // A snapshot copying items it cannot name (a fork's ancestors') waits for as much journal as it holds.
    const due = this.journalBytes - this.snapshotAt >= Math.max(this.device.snapshotStepBytes, this.snapshotBytes);
    if (compacted || due) await this.snapshot(compacted);
    return stamped;
  }

  private async checkBlobs(records: readonly StoredRecord[]): Promise<void> {
    const refs = [...new Set(records.flatMap(blobRefs))];
    if (refs.length === 0) return;
    const missing = await this.guard(() => this.device.missingBlobs(refs), false);
    if (missing.length > 0) throw new StoreError(`record names blob ${missing[0]} that is not in the store`, 'invalid');
  }

  /** A state snapshot of the journal up to the end of its last group; a failure only leaves the older ones (the journal stays the truth). */
  private async snapshot(compacted: boolean): Promise<void> {
    const { journalBytes } = this;
    try {
      const copied = await this.device.putSnapshot(this.fold, { journalBytes, compacted });
      if (copied === null) return;
      this.snapshotBytes = copied;
      this.snapshotAt = journalBytes;
    } catch {
      // the next one is tried after the next step of journal
    }
  }

  /**
   * Runs one device step. A lost lease stops the writer; any other failure stops it too when
   * `fatal` (bytes may be half written: the journal is cut back to its last known end) or when
   * the device says any failure must.
   */
  private async guard<T>(step: () => Promise<T>, fatal: boolean): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof StoreError && error.code === 'lease_lost') {
        // A writer that lost its lease never writes again: what it holds goes now, not at its owner's close().
        this.stop(error);
        await this.device.closeHandle();
        throw error;
      }
      // A device's own failure ('io': a server gone, a disk error) may leave the writer's view wrong: it stops.
      if (error instanceof StoreError && error.code !== 'io') throw error;
      const failure = error instanceof StoreError ? error : this.device.ioError(error);
      if (fatal || error instanceof StoreError) {
        this.stop(failure);
        await this.device.closeHandle();
        await this.device.cutBack(this.journalBytes).catch(() => undefined);
        this.device.abandon();
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
