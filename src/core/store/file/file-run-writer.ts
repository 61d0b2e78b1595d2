import { StoreError, type LeaseInfo, type RunWriter, type TornTailCut } from '../contract';
import { checkHolder, releaseLease, renewLease, type LeaseContext } from './file-lease';
import { rememberLines, writeSnapshot, type JournalPoint, type RecordLines } from './file-snapshots';
import type { FileCheckpointStore, OpenedRun } from './file-store';
import { BranchNeedsRecords, foldFromResumeState, foldRecord, type FoldState } from '../fold';
import { emptyMoves, foldFacts, noteMoves, type FactsMoves, type RunFacts } from '../listing-facts';
import { errorMessage, type StoreFileHandle } from '../fs-port';
import { encodeGroup, lastLineOf } from '../journal-format';
import { leaseNeedsRenewal, renewIntervalMs } from '../lease-policy';
import type { NewRecord, StoredRecord } from '../records';
import { blobRefs } from '../refs';
import { resumeStateOf, type ResumeState } from '../resume-state';
import { appendFactsMoves, readRunFacts, rebuildRunFacts, writeFactsFile, type FactsPart } from './run-facts';
import { factsChanged, stateFileOf, writeStateFile, type RunStateFile } from './run-files';
import { stampRecords } from '../stamp';

/** A writer that closes writes a snapshot when the journal after the newest one holds at least this much. */
const CLOSE_SNAPSHOT_BYTES = 64 << 10;
/** refs.json (only garbage collection reads it) is rewritten with a snapshot at a compaction or after this much journal; pending.json (a resume reads it) with each. */
const REFS_STEP_BYTES = 4 << 20;
/** A facts log is started again (one whole line) once the lines appended pass its first line's bytes, or this many when that is smaller. */
const FACTS_LOG_MIN_BYTES = 16 << 10;

/** Appends commit groups to one run's journal while it holds the run's lease. */
export class FileRunWriter implements RunWriter {
  readonly runId: string;
  readonly resumeState: ResumeState;
  private readonly ctx: LeaseContext;
  private stopped: StoreError | null = null;
  private stateWrittenAt: number;
  private stateDirty = false;
  private closing: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** The run's state so far, kept as records are appended: the source of its snapshots. */
  private fold: FoldState;
  /** The journal offset the newest snapshot covers, and where the last line appended starts. */
  private snapshotAt: number;
  private lastLine: { start: number; crc: string } | undefined;
  /** The size of the newest snapshot this writer wrote when it copied items: the next waits for at least as much journal. */
  private snapshotBytes = 0;
  /** The journal lines of the fold's messages and ledger entries, which its snapshots name instead of copying them. */
  private lines: RecordLines;
  private heartbeat: { stop(): void } | undefined;
  /** The journal offsets pending.json and refs.json were last written at (pending.json with each snapshot, refs.json see REFS_STEP_BYTES; both at close). */
  private readonly factsAt: Record<FactsPart, number> = { pending: -1, refs: -1 };
  /** What moved of each part's facts since this writer last wrote it, and the bytes of its log's first line and of the lines appended since. */
  private readonly moves: Record<FactsPart, FactsMoves> = { pending: emptyMoves(), refs: emptyMoves() };
  private readonly factsLog: Record<FactsPart, { first: number; appended: number }> = {
    pending: { first: 0, appended: 0 },
    refs: { first: 0, appended: 0 },
  };

  /** `state`: what state.json says now (its lastSeq and journalBytes are where the writer starts); `tornTailCut`: the torn write cut when the run was opened. */
  constructor(
    private readonly store: FileCheckpointStore,
    private readonly handle: StoreFileHandle,
    readonly holderId: string,
    private lease: LeaseInfo,
    private state: Omit<RunStateFile, 'v'>,
    opened: OpenedRun,
    /** The run's facts at the journal's end, kept as records are appended (its blob and run references only those appended, until refsKnown). */
    private readonly facts: RunFacts,
    /** False when the run was opened without reading refs.json: read (and merged) before refs.json is first written. */
    private refsKnown: boolean,
    readonly tornTailCut?: TornTailCut,
  ) {
    this.runId = state.runId;
    this.ctx = store.leaseContext(this.runId);
    this.stateWrittenAt = store.clock.now();
    this.resumeState = resumeStateOf(opened.fold);
    // Its own copy: the state handed out stays what it was at open while appends fold in.
    this.fold = foldFromResumeState(this.resumeState);
    this.snapshotAt = opened.snapshotAt;
    this.lines = opened.lines ?? new WeakMap();
    this.heartbeat = store.timers?.every(renewIntervalMs(this.ctx.timeoutMs), () => this.renewLease().catch(() => undefined));
  }

  append(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    return this.serialised(() => this.appendNow(records));
  }

  /** Also called by the heartbeat timer: in the same queue as appends, so a renewal never splits an append's check from its write. */
  renewLease(): Promise<void> {
    return this.serialised(async () => {
      if (this.stopped) throw this.stopped;
      this.lease = await this.guard(() => renewLease(this.ctx, this.holderId, this.lease.generation), false);
    });
  }

  close(): Promise<void> {
    return this.serialised(async () => {
      if (!this.stopped) {
        this.stop(new StoreError('this writer is closed', 'lease_lost'));
        try {
          // A resume after a clean stop then reads no journal, only what a snapshot of its live context holds.
          if (this.lastLine && this.state.journalBytes - this.snapshotAt >= CLOSE_SNAPSHOT_BYTES) await this.snapshot(this.lastLine);
          if (this.lastLine) await this.writeFacts(this.lastLine, ['pending', 'refs']);
          if (this.stateDirty) await this.writeState();
          await releaseLease(this.ctx, this.holderId);
        } catch {
          this.store.abandoned.add(this.holderId);
        }
      }
      await this.closeHandle();
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
    const { fs } = this.store;
    const now = this.store.clock.now();
    const stamped = stampRecords(records, this.state.lastSeq + 1, now);
    await this.checkBlobs(stamped);
    const bytes = encodeGroup(stamped);
    // The critical section: the holder and generation, the journal's size, then the write, with
    // nothing else awaited between them (appends and renewals share one queue).
    await this.guard(async () => {
      const [lease, size] = await Promise.all([checkHolder(this.ctx, this.holderId, this.lease.generation), fs.size(this.handle)]);
      this.lease = lease;
      if (size !== this.state.journalBytes) {
        throw new StoreError(
          `the journal changed under this writer (${size} bytes, expected ${this.state.journalBytes}); reopen the run`,
          'lease_lost',
          this.store.journalPath(this.runId),
        );
      }
      this.store.appends.wrote(this.runId, size + bytes.length);
      await fs.write(this.handle, bytes);
      await fs.sync(this.handle);
    }, true);
    // The records are durable: a failed renewal here only stops the writer (lease lost) or waits for the next one.
    if (leaseNeedsRenewal(this.lease, now, this.ctx.timeoutMs)) {
      await this.guard(() => renewLease(this.ctx, this.holderId, this.lease.generation), false).then(
        (renewed) => (this.lease = renewed),
        () => undefined,
      );
    }
    const before = this.state;
    await this.track(stamped, bytes.length, now);
    const line = lastLineOf(bytes);
    this.lastLine = { start: before.journalBytes + line.start, crc: line.crc };
    rememberLines(this.lines, bytes, before.journalBytes, stamped);
    const compacted = stamped.some((record) => record.type === 'compaction');
    // A snapshot copying items it cannot name (a fork's ancestors') waits for as much journal as it holds.
    const due = this.state.journalBytes - this.snapshotAt >= Math.max(this.store.snapshotStepBytes, this.snapshotBytes);
    if (compacted || due) await this.snapshot(this.lastLine, compacted);
    await this.maybeWriteState(now, before);
    return stamped;
  }

  private async checkBlobs(records: readonly StoredRecord[]): Promise<void> {
    for (const record of records) {
      for (const hash of blobRefs(record)) {
        const present = await this.guard(() => this.store.blobs.has(hash), false);
        if (!present) throw new StoreError(`record names blob ${hash} that is not in the store`, 'invalid');
      }
    }
  }

  private async track(records: readonly StoredRecord[], bytes: number, now: number): Promise<void> {
    try {
      for (const record of records) foldRecord(this.fold, record);
    } catch (error) {
      if (!(error instanceof BranchNeedsRecords)) throw error;
      const opened = await this.store.openRun(this.runId);
      this.fold = foldFromResumeState(resumeStateOf(opened.fold));
      this.lines = opened.lines ?? new WeakMap();
    }
    this.stateDirty = true;
    foldFacts(this.facts, records);
    noteMoves(this.moves.pending, records);
    noteMoves(this.moves.refs, records);
    this.state = stateFileOf(this.fold, this.state.journalBytes + bytes, now, this.state.tornTailCut, this.facts.pending.size);
  }

  /** Those of `parts` not yet at the journal's end, so that their next readers fold only what is appended after; a failure leaves the older one. */
  private async writeFacts(line: { start: number; crc: string }, parts: readonly FactsPart[]): Promise<void> {
    const point = { journalBytes: this.state.journalBytes, lastLineStart: line.start, lastLineCrc: line.crc, lastSeq: this.state.lastSeq };
    let stale = parts.filter((part) => this.factsAt[part] !== point.journalBytes);
    // An older refs.json stays when this writer cannot learn the run's references: its readers fold the journal after it.
    if (stale.includes('refs') && !(await this.knowRefs())) stale = stale.filter((part) => part !== 'refs');
    for (const part of stale) {
      const written = await this.writeFactsPart(part, point).catch(() => false);
      this.factsAt[part] = written ? point.journalBytes : -1;
      if (written) this.moves[part] = emptyMoves();
    }
  }

  /**
   * One facts log brought to `point`: what moved since appended to the line this writer wrote last;
   * else, and once the appended lines outgrow the first, the whole set as a new log. False when not written.
   */
  private async writeFactsPart(part: FactsPart, point: JournalPoint): Promise<boolean> {
    const log = this.factsLog[part];
    if (this.factsAt[part] !== -1 && log.appended <= Math.max(log.first, FACTS_LOG_MIN_BYTES)) {
      const bytes = await appendFactsMoves(this.store, this.runId, part, this.moves[part], point);
      if (bytes !== null) log.appended += bytes;
      if (bytes !== null) return true;
    }
    const first = (await writeFactsFile(this.store, this.runId, this.facts, point, [part]))[part];
    this.factsLog[part] = { first: first ?? 0, appended: 0 };
    return first !== undefined;
  }

  /** True once the facts hold the run's blob and run references (read from refs.json and the journal after it, else the whole journal). */
  private async knowRefs(): Promise<boolean> {
    if (this.refsKnown) return true;
    const read = await readRunFacts(this.store, this.runId, undefined, ['refs']).catch(() => null);
    const refs = read ?? (await rebuildRunFacts(this.store, this.runId).catch(() => null));
    if (!refs) return false;
    refs.blobs.forEach((hash) => this.facts.blobs.add(hash));
    refs.runs.forEach((id) => this.facts.runs.add(id));
    return (this.refsKnown = true);
  }

  /** A state snapshot of the journal up to the end of its last group; a failure only leaves the older ones (the journal stays the truth). */
  private async snapshot(line: { start: number; crc: string }, compacted = false): Promise<void> {
    const { journalBytes } = this.state;
    try {
      const position = { journalBytes, lastLineStart: line.start, lastLineCrc: line.crc };
      this.snapshotBytes = await writeSnapshot(this.store.fs, this.ctx.runDir, this.fold, position, this.lines, this.store.forkSpan);
      this.snapshotAt = journalBytes;
      const refs = compacted || journalBytes - this.factsAt.refs >= REFS_STEP_BYTES;
      await this.writeFacts(line, refs ? ['pending', 'refs'] : ['pending']);
    } catch {
      // the next one is tried after the next step of journal
    }
  }

  /** state.json is a listing cache: rewritten when the status or step changes, else at most every interval. */
  private async maybeWriteState(now: number, before: Omit<RunStateFile, 'v'>): Promise<void> {
    const changed = before.status !== this.state.status || before.steps !== this.state.steps || factsChanged(before, this.state);
    if (!changed && now - this.stateWrittenAt < this.store.stateIntervalMs) return;
    try {
      await this.writeState();
    } catch {
      // The records are durable in the journal, which stays the truth; the next append retries.
    }
  }

  private async writeState(): Promise<void> {
    await writeStateFile(this.store.fs, this.ctx.runDir, this.state);
    this.stateDirty = false;
    this.stateWrittenAt = this.store.clock.now();
  }

  /**
   * Runs one I/O step. A lost lease stops the writer; any other failure stops it too when
   * `fatal` (bytes may be half written), after cutting the journal back to its last known end.
   */
  private async guard<T>(step: () => Promise<T>, fatal: boolean): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof StoreError) {
        // A writer that lost its lease never writes again: its handle goes now, not at its owner's close().
        if (error.code === 'lease_lost') {
          this.stop(error);
          await this.closeHandle();
        }
        throw error;
      }
      const failure = new StoreError(
        `store I/O failed for run ${this.runId}: ${errorMessage(error)}`,
        'io',
        this.store.journalPath(this.runId),
      );
      if (fatal) {
        this.stop(failure);
        await this.closeHandle();
        await this.store.fs.truncate(this.store.journalPath(this.runId), this.state.journalBytes).catch(() => undefined);
        this.store.abandoned.add(this.holderId);
      }
      throw failure;
    }
  }

  private closeHandle(): Promise<void> {
    return (this.closing ??= this.store.fs.close(this.handle).catch(() => undefined));
  }

  private stop(error: StoreError): void {
    if (!this.stopped) this.stopped = error;
    this.heartbeat?.stop();
    this.heartbeat = undefined;
  }
}
