import type { Clock, Timers } from '../ports';
import type { LeaseInfo, RunWriter, TornTailCut } from './contract';
import type { NewListingRow } from './device';
import { renewLease, releaseLease, type LeaseContext } from './lease';
import { rememberLines, writeSnapshot, type JournalPoint, type RecordLines } from './snapshots';
import type { JournalStore, OpenedRun } from './store';
import type { FoldState } from './fold';
import { emptyMoves, factsOfRun, foldFacts, noteMoves, type FactsMoves, type RunFacts } from './listing-facts';
import { lastLineOf } from './journal-format';
import { StoreRunWriter, type AppendGroup, type WriterDevice } from './run-writer';
import { appendFactsMoves, pointAt, readRunFacts, rebuildRunFacts, runFacts, writeFactsFile, type FactsPart } from './facts-log';
import { factsChanged, listingOf, sameListing } from './listing-row';
import type { StoreError } from './contract';

/** refs.json (only garbage collection reads it) is rewritten with a snapshot at a compaction or after this much journal; pending.json (a resume reads it) with each. */
const REFS_STEP_BYTES = 4 << 20;
/** A facts log is started again (one whole line) once the lines appended pass its first line's bytes, or this many when that is smaller. */
const FACTS_LOG_MIN_BYTES = 16 << 10;

/**
 * The writer of a run just opened (or created) under a new lease: the listing row brought up to
 * date first, with the facts a writer keeps (from a whole fold, else pending.json with the journal
 * after it, rebuilt from the whole journal when it does not hold). A resume needs the pending
 * count, not the run's blob references: the writer reads refs.json only when it first writes it
 * (refsKnown false), off the resume's path.
 */
export async function startWriter(
  store: JournalStore,
  holderId: string,
  lease: LeaseInfo,
  opened: OpenedRun,
  cut?: TornTailCut,
): Promise<RunWriter> {
  const { device } = store;
  const { fold, scan } = opened;
  const runId = fold.run.runId;
  const stored = await device.readListing(runId);
  await store.pause?.();
  // The time of the last record: the listing's when it stands at that record (a snapshot does not carry it).
  const current = stored?.lastSeq === fold.lastSeq ? stored.updatedAt : undefined;
  const updatedAt = scan.records.at(-1)?.at ?? current ?? fold.latestCheckpoint?.at ?? fold.run.at;
  const tornTailCut = cut ? { offset: cut.offset, bytes: cut.bytes, at: store.clock.now() } : stored?.tornTailCut;
  const known = { from: opened.snapshotAt, end: scan.goodLength, records: scan.records };
  const whole = opened.snapshotAt === 0;
  const pending = whole ? null : await readRunFacts(store, runId, known, ['pending']).catch(() => null);
  const facts = whole ? factsOfRun(fold, scan.records) : (pending ?? (await runFacts(store, runId, known)));
  await store.pause?.();
  // Its readers (GC while the run goes on) then fold only the journal after this point.
  if (whole) await writeFactsFile(store, runId, facts, await pointAt(store, runId, scan.goodLength, fold.lastSeq)).catch(() => undefined);
  const state = listingOf(fold, scan.goodLength, updatedAt, tornTailCut, facts.pending.size);
  // A writer that closed cleanly left the listing current: rewriting it would only cost a write.
  if (!sameListing(stored, state)) await device.writeListing(runId, state, true);
  const writer = new StoreWriterDevice(store, holderId, state, opened, facts, whole || pending === null);
  const start = { fold, lastSeq: state.lastSeq, journalBytes: state.journalBytes, snapshotAt: opened.snapshotAt };
  return new StoreRunWriter(writer, runId, holderId, lease, start, cut);
}

/** What one writer does over the device: the run's journal and lease, its snapshots, facts logs and listing row. */
class StoreWriterDevice implements WriterDevice {
  readonly clock: Clock;
  readonly timers: Timers | undefined;
  readonly leaseTimeoutMs: number;
  readonly snapshotStepBytes: number;
  private readonly runId: string;
  private readonly ctx: LeaseContext;
  private stateWrittenAt: number;
  private stateDirty = false;
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

  /** `state`: the listing row now (its lastSeq and journalBytes are where the writer starts). */
  constructor(
    private readonly store: JournalStore,
    private readonly holderId: string,
    private state: NewListingRow,
    opened: OpenedRun,
    /** The run's facts at the journal's end, kept as records are appended (its blob and run references only those appended, until refsKnown). */
    private readonly facts: RunFacts,
    /** False when the run was opened without reading refs.json: read (and merged) before refs.json is first written. */
    private refsKnown: boolean,
  ) {
    this.runId = state.runId;
    this.ctx = store.lease;
    this.clock = store.clock;
    this.timers = store.timers;
    this.leaseTimeoutMs = store.leaseTimeoutMs;
    this.snapshotStepBytes = store.snapshotStepBytes;
    this.stateWrittenAt = store.clock.now();
    this.lines = opened.lines ?? new WeakMap();
  }

  missingBlobs(hashes: readonly string[]): Promise<readonly string[]> {
    return this.store.device.missingBlobs(hashes);
  }

  /** The group under the lease, with the listing row when it is due (a device that can writes both in one commit). */
  async appendGroup({ records, bytes, journalBytes, now, fold }: AppendGroup, held: LeaseInfo): Promise<LeaseInfo> {
    foldFacts(this.facts, records);
    noteMoves(this.moves.pending, records);
    noteMoves(this.moves.refs, records);
    const next = listingOf(fold, journalBytes + bytes.length, now, this.state.tornTailCut, this.facts.pending.size);
    const due = this.listingDue(now, next);
    const group = { bytes, at: journalBytes, firstSeq: records[0]!.seq };
    const lease = await this.store.device.appendGroup(this.runId, group, held, due ? next : undefined);
    this.stateDirty = !due;
    if (due) this.stateWrittenAt = now;
    this.state = next;
    return lease;
  }

  renewLease(lease: LeaseInfo): Promise<LeaseInfo> {
    return renewLease(this.ctx, this.runId, lease);
  }

  async appended({ records, bytes, journalBytes, now, fold }: AppendGroup): Promise<void> {
    const line = lastLineOf(bytes);
    this.lastLine = { start: journalBytes + line.start, crc: line.crc };
    rememberLines(this.lines, bytes, journalBytes, records);
    // A branch record folds only once the run is read again: its listing row is the one after that.
    const next = listingOf(fold, journalBytes + bytes.length, now, this.state.tornTailCut, this.facts.pending.size);
    if (JSON.stringify(next) === JSON.stringify(this.state)) return;
    const due = this.listingDue(now, next);
    this.state = next;
    this.stateDirty = true;
    if (due) await this.writeState().catch(() => undefined);
  }

  /** The listing row is a cache: rewritten when the status, step or a fact changes, else at most every interval. */
  private listingDue(now: number, next: NewListingRow): boolean {
    const before = this.state;
    const changed = before.status !== next.status || before.steps !== next.steps || factsChanged(before, next);
    return changed || now - this.stateWrittenAt >= this.store.stateIntervalMs;
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
    const copied = await writeSnapshot(this.store.device, fold, position, this.lines, this.store.forkSpan);
    const refs = compacted || journalBytes - this.factsAt.refs >= REFS_STEP_BYTES;
    await this.writeFacts(line, refs ? ['pending', 'refs'] : ['pending']);
    return copied;
  }

  async release(): Promise<void> {
    if (this.lastLine) await this.writeFacts(this.lastLine, ['pending', 'refs']);
    if (this.stateDirty) await this.writeState();
    await releaseLease(this.ctx, this.runId, this.holderId);
  }

  async cutBack(journalBytes: number): Promise<void> {
    await this.store.device.truncateJournal(this.runId, journalBytes);
  }

  abandon(): void {
    this.store.abandoned.add(this.holderId);
  }

  closeHandle(): Promise<void> {
    return this.store.device.closeJournal(this.runId);
  }

  ioError(error: unknown): StoreError {
    return this.store.ioError(this.runId, error);
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

  private async writeState(): Promise<void> {
    await this.store.device.writeListing(this.runId, this.state, true);
    this.stateDirty = false;
    this.stateWrittenAt = this.store.clock.now();
  }
}
