import type { Clock, Timers } from '../../ports';
import { StoreError, type LeaseInfo, type RunWriter, type TornTailCut } from '../contract';
import { checkHolder, releaseLease, renewLease, type LeaseContext } from './file-lease';
import { rememberLines, writeSnapshot, type JournalPoint, type RecordLines } from './file-snapshots';
import type { FileCheckpointStore, OpenedRun } from './file-store';
import type { FoldState } from '../fold';
import { emptyMoves, foldFacts, noteMoves, type FactsMoves, type RunFacts } from '../listing-facts';
import { errorMessage, type StoreFileHandle } from '../fs-port';
import { lastLineOf } from '../journal-format';
import { StoreRunWriter, type AppendGroup, type WriterDevice } from '../run-writer';
import { appendFactsMoves, readRunFacts, rebuildRunFacts, writeFactsFile, type FactsPart } from './run-facts';
import { factsChanged, stateFileOf, writeStateFile, type RunStateFile } from './run-files';

/** refs.json (only garbage collection reads it) is rewritten with a snapshot at a compaction or after this much journal; pending.json (a resume reads it) with each. */
const REFS_STEP_BYTES = 4 << 20;
/** A facts log is started again (one whole line) once the lines appended pass its first line's bytes, or this many when that is smaller. */
const FACTS_LOG_MIN_BYTES = 16 << 10;

/** The writer of a run of a file store: the store's one writer over this run's files. */
export function fileRunWriter(
  store: FileCheckpointStore,
  handle: StoreFileHandle,
  holderId: string,
  lease: LeaseInfo,
  state: Omit<RunStateFile, 'v'>,
  opened: OpenedRun,
  facts: RunFacts,
  refsKnown: boolean,
  tornTailCut?: TornTailCut,
): RunWriter {
  const device = new FileWriterDevice(store, handle, holderId, state, opened, facts, refsKnown);
  const start = { fold: opened.fold, lastSeq: state.lastSeq, journalBytes: state.journalBytes, snapshotAt: opened.snapshotAt };
  return new StoreRunWriter(device, state.runId, holderId, lease, start, tornTailCut);
}

/** A file store's primitives for one writer: the run's journal file, its lease file, snapshots, facts logs and state.json. */
class FileWriterDevice implements WriterDevice {
  readonly clock: Clock;
  readonly timers: Timers | undefined;
  readonly leaseTimeoutMs: number;
  readonly snapshotStepBytes: number;
  readonly stopsOnAnyFailure = false;
  private readonly runId: string;
  private readonly ctx: LeaseContext;
  private stateWrittenAt: number;
  private stateDirty = false;
  private closing: Promise<void> | undefined;
  /** Where the last line appended starts, and its checksum (a snapshot names it). */
  private lastLine: { start: number; crc: string } | undefined;
  /** The journal lines of the fold's messages and ledger entries, which its snapshots name instead of copying them. */
  private lines: RecordLines;
  /** The journal offsets pending.json and refs.json were last written at (pending.json with each snapshot, refs.json see REFS_STEP_BYTES; both at close). */
  private readonly factsAt: Record<FactsPart, number> = { pending: -1, refs: -1 };
  /** What moved of each part's facts since this writer last wrote it, and the bytes of its log's first line and of the lines appended since. */
  private readonly moves: Record<FactsPart, FactsMoves> = { pending: emptyMoves(), refs: emptyMoves() };
  private readonly factsLog: Record<FactsPart, { first: number; appended: number }> = {
    pending: { first: 0, appended: 0 },
    refs: { first: 0, appended: 0 },
  };

  /** `state`: what state.json says now (its lastSeq and journalBytes are where the writer starts). */
  constructor(
    private readonly store: FileCheckpointStore,
    private readonly handle: StoreFileHandle,
    private readonly holderId: string,
    private state: Omit<RunStateFile, 'v'>,
    opened: OpenedRun,
    /** The run's facts at the journal's end, kept as records are appended (its blob and run references only those appended, until refsKnown). */
    private readonly facts: RunFacts,
    /** False when the run was opened without reading refs.json: read (and merged) before refs.json is first written. */
    private refsKnown: boolean,
  ) {
    this.runId = state.runId;
    this.ctx = store.leaseContext(this.runId);
    this.clock = store.clock;
    this.timers = store.timers;
    this.leaseTimeoutMs = this.ctx.timeoutMs;
    this.snapshotStepBytes = store.snapshotStepBytes;
    this.stateWrittenAt = store.clock.now();
    this.lines = opened.lines ?? new WeakMap();
  }

  async missingBlobs(hashes: readonly string[]): Promise<readonly string[]> {
    const missing: string[] = [];
    for (const hash of hashes) if (!(await this.store.blobs.has(hash))) missing.push(hash);
    return missing;
  }

  /** The critical section: the holder and generation, the journal's size, then the write, with nothing else awaited between them. */
  async appendGroup({ bytes, journalBytes }: AppendGroup, held: LeaseInfo): Promise<LeaseInfo> {
    const { fs } = this.store;
    const [lease, size] = await Promise.all([checkHolder(this.ctx, this.holderId, held.generation), fs.size(this.handle)]);
    if (size !== journalBytes) {
      throw new StoreError(
        `the journal changed under this writer (${size} bytes, expected ${journalBytes}); reopen the run`,
        'lease_lost',
        this.store.journalPath(this.runId),
      );
    }
    this.store.appends.wrote(this.runId, size + bytes.length);
    await fs.write(this.handle, bytes);
    await fs.sync(this.handle);
    return lease;
  }

  renewLease(lease: LeaseInfo): Promise<LeaseInfo> {
    return renewLease(this.ctx, this.holderId, lease.generation);
  }

  async appended({ records, bytes, journalBytes, now, fold }: AppendGroup): Promise<void> {
    const before = this.state;
    this.stateDirty = true;
    foldFacts(this.facts, records);
    noteMoves(this.moves.pending, records);
    noteMoves(this.moves.refs, records);
    this.state = stateFileOf(fold, journalBytes + bytes.length, now, this.state.tornTailCut, this.facts.pending.size);
    const line = lastLineOf(bytes);
    this.lastLine = { start: journalBytes + line.start, crc: line.crc };
    rememberLines(this.lines, bytes, journalBytes, records);
    await this.maybeWriteState(now, before);
  }

  async reopen(): Promise<FoldState> {
    const opened = await this.store.openRun(this.runId);
    this.lines = opened.lines ?? new WeakMap();
    return opened.fold;
  }

  /** A snapshot, then the facts logs at the same point (refs.json at a compaction or after REFS_STEP_BYTES). */
  async putSnapshot(fold: FoldState, { journalBytes, compacted }: { journalBytes: number; compacted: boolean }): Promise<number | null> {
    const line = this.lastLine;
    if (!line) return null;
    const position = { journalBytes, lastLineStart: line.start, lastLineCrc: line.crc };
    const copied = await writeSnapshot(this.store.fs, this.ctx.runDir, fold, position, this.lines, this.store.forkSpan);
    const refs = compacted || journalBytes - this.factsAt.refs >= REFS_STEP_BYTES;
    await this.writeFacts(line, refs ? ['pending', 'refs'] : ['pending']);
    return copied;
  }

  async release(): Promise<void> {
    if (this.lastLine) await this.writeFacts(this.lastLine, ['pending', 'refs']);
    if (this.stateDirty) await this.writeState();
    await releaseLease(this.ctx, this.holderId);
  }

  async cutBack(journalBytes: number): Promise<void> {
    await this.store.fs.truncate(this.store.journalPath(this.runId), journalBytes);
  }

  abandon(): void {
    this.store.abandoned.add(this.holderId);
  }

  closeHandle(): Promise<void> {
    return (this.closing ??= this.store.fs.close(this.handle).catch(() => undefined));
  }

  ioError(error: unknown): StoreError {
    return new StoreError(`store I/O failed for run ${this.runId}: ${errorMessage(error)}`, 'io', this.store.journalPath(this.runId));
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
}
