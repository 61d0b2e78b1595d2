import { systemClock, type Clock, type Timers } from '../ports';
import {
  StoreError,
  type CheckpointStore,
  type DecisionRecord,
  type ForkRequest,
  type GcResult,
  type JournalDamage,
  type LeaseInfo,
  type ReadRunOptions,
  type RunState,
  type RunSummary,
  type RunWriter,
  type TornTailCut,
  type VerifyReport,
} from './contract';
import { sha256Hex } from '../patches/hash';
import { appendDecisions } from './decisions';
import type { DeviceWatch, JournalDevice } from './device';
import { firstSeqOf, forkRun, openForkFromParent, parentRecords } from './forks';
import { collectGarbage } from './gc';
import { listRuns, verifyRun } from './listing';
import { listingOf, readDamage, writeDamage } from './listing-row';
import { runStateOf, startFold, type FoldState } from './fold';
import { foldInSlices } from './history';
import { errorMessage } from './fs-port';
import { encodeGroup, scanJournal, type JournalScan, type ReadOptions } from './journal-format';
import {
  acquireLease,
  DEFAULT_LEASE_TIMEOUT_MS,
  fenceLease,
  newHolderId,
  releaseLease,
  takeOver,
  unknownProcess,
  type LeaseContext,
  type ProcessIdentity,
} from './lease-policy';
import { MIGRATIONS, type MigrationTable } from './migrations';
import { FORMAT_VERSION, type RunRecord, type StoredRecord } from './records';
import { BLOB_HASH } from './refs';
import type { RetentionPolicy } from './retention';
import { resumeStateOf, type ResumeState } from './resume-state';
import { rememberLines, resumeFromSnapshot, type JournalAt, type RecordLines } from './snapshots';
import { stampRecords } from './stamp';
import { startWriter } from './run-writer';

export interface StoreOptions {
  readonly clock?: Clock;
  /** The host's timers: a writer renews its lease on one for as long as it lives. */
  readonly timers?: Timers;
  readonly leaseTimeoutMs?: number;
  readonly process?: ProcessIdentity;
  readonly migrations?: MigrationTable;
  /** The newest format this store reads (FORMAT_VERSION); tests of migrations set it. */
  readonly readVersion?: number;
  /** Unreferenced blobs younger than this survive garbage collection (a writer may be about to name them). */
  readonly blobGraceMs?: number;
  /** The listing row is rewritten at most this often unless the status, step or a fact changes. */
  readonly stateIntervalMs?: number;
  /** A state snapshot is written at each compaction and each time a journal has grown by this much (0: after every append). */
  readonly snapshotStepBytes?: number;
  /** Of the older snapshots, the newest of each span of this many records is kept (FORK_SPAN): a fork opens from its parent's newest one before its step. */
  readonly forkSpan?: number;
}

/** A run opened from its newest snapshot (or its whole journal): its state and the journal read after the snapshot. */
export interface OpenedRun {
  readonly fold: FoldState;
  readonly scan: JournalScan;
  /** The journal offset the snapshot covers (0: none). */
  readonly snapshotAt: number;
  /** The journal lines of the messages and ledger entries read from the snapshot or the journal after it. */
  readonly lines?: RecordLines;
}

/** The CheckpointStore, written once over a journal device (device.ts): the file device, PostgreSQL's, the tests' memory device. */
export class JournalStore implements CheckpointStore {
  /** The options, with their defaults filled in. */
  readonly settings;
  /** Holders of this process whose writer stopped on an I/O error: their lease may be taken at once. */
  readonly abandoned = new Set<string>();
  readonly lease: LeaseContext;
  /** Runs this store claimed for a worker (claimRun), by run: the lease the next openWriter opens it under. */
  private readonly claims = new Map<string, { holderId: string; lease: LeaseInfo }>();
  /** @internal Asked between slices of a long read. */
  readonly pause: (() => Promise<void>) | undefined;

  constructor(
    readonly device: JournalDevice,
    options: StoreOptions = {},
  ) {
    this.pause = device.pause;
    this.settings = {
      clock: options.clock ?? systemClock,
      timers: options.timers,
      leaseTimeoutMs: options.leaseTimeoutMs ?? DEFAULT_LEASE_TIMEOUT_MS,
      process: options.process ?? unknownProcess,
      migrations: options.migrations ?? MIGRATIONS,
      readVersion: options.readVersion ?? FORMAT_VERSION,
      blobGraceMs: options.blobGraceMs ?? 10 * 60_000,
      stateIntervalMs: options.stateIntervalMs ?? 1000,
      snapshotStepBytes: options.snapshotStepBytes ?? 256 << 10,
      forkSpan: options.forkSpan,
    };
    const { leaseTimeoutMs: timeoutMs, process: me, clock } = this.settings;
    this.lease = { device, timeoutMs, me, now: () => clock.now(), abandoned: this.abandoned };
  }

  /** @internal How the run's journal is read. */
  journal(runId: string, firstSeq?: number): JournalAt {
    const { migrations, readVersion } = this.settings;
    const read: ReadOptions = { file: this.device.journalName(runId), migrations, readVersion };
    return { device: this.device, runId, read: firstSeq === undefined ? read : { ...read, firstSeq } };
  }

  async createRun(run: Omit<RunRecord, 'v' | 'at' | 'type'>): Promise<RunWriter> {
    const stamped = stampRecords([{ ...run, type: 'run' }], 1, this.settings.clock.now());
    const bytes = encodeGroup(stamped);
    const fold = startFold(stamped[0]);
    const holderId = newHolderId();
    const lease = takeOver(this.lease, { kind: 'none' }, holderId)!;
    const opened = { fold, scan: { records: stamped, goodLength: bytes.length }, snapshotAt: 0 };
    return this.started(run.runId, holderId, async () => {
      await this.device.createRun(run.runId, bytes, listingOf(fold, bytes.length, fold.run.at, undefined, 0), lease);
      return startWriter(this, holderId, lease, opened);
    });
  }

  async openWriter(runId: string): Promise<RunWriter> {
    await this.mustExist(runId);
    // A run this store claimed for a worker (claimRun) opens under the claim's lease.
    const claim = this.claims.get(runId);
    this.claims.delete(runId);
    const holderId = claim?.holderId ?? newHolderId();
    const lease = claim?.lease ?? (await acquireLease(this.lease, runId, holderId));
    return this.started(runId, holderId, () => this.openUnder(runId, holderId, lease));
  }

  /** The writer of a run under a lease just taken: damage a whole read found refuses it, a torn tail is cut. */
  private async openUnder(runId: string, holderId: string, lease: LeaseInfo): Promise<RunWriter> {
    // A writer reads only the journal after the newest snapshot: damage a whole read found before it refuses writers too.
    const known = await readDamage(this.device, runId);
    if (known) throw damaged(known);
    const opened = await this.openRun(runId);
    const { tornTail, goodLength } = opened.scan;
    if (tornTail) await this.device.truncateJournal(runId, goodLength);
    const cut: TornTailCut | undefined = tornTail && { file: this.device.journalName(runId), ...tornTail };
    return startWriter(this, holderId, lease, opened, cut);
  }

  /** Runs `open` holding the run's new lease; the lease is released when it fails. */
  private async started(runId: string, holderId: string, open: () => Promise<RunWriter>): Promise<RunWriter> {
    try {
      return await open();
    } catch (error) {
      await releaseLease(this.lease, runId, holderId).catch(() => this.abandoned.add(holderId));
      await this.device.closeJournal(runId);
      if (error instanceof StoreError) throw error;
      throw this.ioError(runId, error);
    }
  }

  /** A failure of the device's I/O on a run, as the store throws it. */
  ioError(runId: string, error: unknown): StoreError {
    const journal = this.device.journalName(runId);
    return new StoreError(`store I/O failed on ${journal}: ${errorMessage(error)}`, 'io', journal);
  }

  private async mustExist(runId: string): Promise<void> {
    if ((await this.device.journalSize(runId)) === null)
      throw new StoreError(`run ${runId} not found`, 'not_found', this.device.journalName(runId));
  }

  async readResumeState(runId: string): Promise<ResumeState> {
    return resumeStateOf((await this.openRun(runId)).fold);
  }

  /**
   * @internal The run's state from its newest snapshot that holds and the journal after it, else
   * from the whole journal, with the lines of its messages and ledger entries. Damage in what is
   * read throws (nothing is changed); a torn tail is left for the caller (a writer cuts it).
   */
  async openRun(runId: string): Promise<OpenedRun> {
    const resumed = await resumeFromSnapshot(this.journal(runId));
    if (resumed) return { ...resumed, scan: await this.checkedScan(runId, resumed.scan, false) };
    const bytes = await this.device.readJournal(runId);
    const own = await this.scanOwn(runId, bytes);
    // A fork without a snapshot of its own: from its parent's snapshots, not its parent's whole journal.
    const first = own.records[0];
    const forked = first?.type === 'fork' && first.runId === runId ? await openForkFromParent(this, bytes, own) : null;
    if (forked) return forked;
    const lines: RecordLines = new WeakMap();
    rememberLines(lines, bytes, 0, own.records);
    const scan = await this.checkedScan(runId, await this.withParents(own));
    return { fold: await foldInSlices(scan.records, undefined, this.pause), scan, snapshotAt: 0, lines };
  }

  async readRun(runId: string, options?: ReadRunOptions): Promise<RunState> {
    const scan = await this.scanJournalOf(runId);
    // Without damage, or without even a run record before it, intactPart reads as a whole read does.
    if (!options?.intactPart || !scan.damage || scan.records.length === 0)
      return runStateOf(await foldInSlices((await this.checkedScan(runId, scan)).records, options, this.pause));
    await this.recordDamage(runId, scan.damage).catch(() => undefined);
    const state = runStateOf(await foldInSlices(scan.records, options, this.pause));
    return { ...state, damage: { file: this.device.journalName(runId), ...scan.damage } };
  }

  async readRecords(runId: string): Promise<readonly StoredRecord[]> {
    return (await this.checkedScan(runId, await this.scanJournalOf(runId))).records;
  }

  /**
   * @internal The whole journal of a run, scanned; a fork's records begin with the parent's it
   * stands on (offsets stay those of its own journal). Throws not_found when the run has no journal.
   */
  async scanJournalOf(runId: string): Promise<JournalScan> {
    return this.withParents(await this.scanOwn(runId, await this.device.readJournal(runId)));
  }

  private scanOwn(runId: string, bytes: Uint8Array): Promise<JournalScan> {
    return scanJournal(bytes, this.journal(runId, firstSeqOf(bytes)).read, this.pause);
  }

  /** A fork's scan with its parents' records it stands on before its own. */
  private async withParents(scan: JournalScan): Promise<JournalScan> {
    const first = scan.records[0];
    if (first?.type !== 'fork' || scan.damage) return scan;
    return { ...scan, records: [...(await parentRecords(this, first)), ...scan.records] };
  }

  forkRun(parentId: string, fork: ForkRequest): Promise<RunSummary> {
    return forkRun(this, parentId, fork);
  }

  listRuns(): Promise<readonly RunSummary[]> {
    return listRuns(this);
  }

  watchAppends(listener: (runId: string) => void): DeviceWatch {
    return this.device.watch('appends', listener) ?? { close: () => undefined };
  }

  watchLeases(listener: (runId: string) => void): DeviceWatch {
    return this.device.watch('leases', listener) ?? { close: () => undefined };
  }

  async appendDecisions(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]> {
    const light = await appendDecisions(this, runId, records);
    if (light) return light;
    const writer = await this.openWriter(runId);
    try {
      return await writer.append(records);
    } finally {
      await writer.close();
    }
  }

  async fenceLease(runId: string): Promise<void> {
    await this.mustExist(runId);
    await fenceLease(this.lease, runId);
  }

  /**
   * Claims one run a worker of `workspace` may go on with (a device shared by workers): the claim
   * is the run's lease, which the next openWriter of the run opens it under. null when none is
   * free or the device hands no runs to workers.
   */
  async claimRun(workspace: string, skip: readonly string[] = []): Promise<string | null> {
    const holderId = newHolderId();
    const claimed = await this.device.claimRun?.(workspace, skip, (read) => takeOver(this.lease, read, holderId));
    if (!claimed) return null;
    this.claims.set(claimed.runId, { holderId, lease: claimed.lease });
    return claimed.runId;
  }

  async putBlob(bytes: Uint8Array): Promise<string> {
    const hash = sha256Hex(bytes);
    await this.device.putBlob(hash, bytes);
    return hash;
  }

  async getBlob(hash: string): Promise<Uint8Array> {
    if (!BLOB_HASH.test(hash)) throw new StoreError(`not a blob hash: ${hash}`, 'invalid');
    const bytes = await this.device.getBlob(hash);
    if (!bytes) throw new StoreError(`blob ${hash} not found`, 'not_found');
    if (sha256Hex(bytes) !== hash) throw new StoreError(`blob ${hash} does not match its hash`, 'damaged');
    return bytes;
  }

  verify(runId: string): Promise<VerifyReport> {
    return verifyRun(this, runId);
  }

  collectGarbage(policy: RetentionPolicy): Promise<GcResult> {
    return collectGarbage(this, policy);
  }

  dispose(): Promise<void> {
    return this.device.dispose?.() ?? Promise.resolve();
  }

  /** @internal A journal's scan, checked: damage is recorded beside it and thrown, nothing is changed. With `whole`, it must begin with this run's record. */
  async checkedScan(runId: string, scan: JournalScan, whole = true): Promise<JournalScan> {
    const journal = this.device.journalName(runId);
    if (scan.damage) {
      await this.recordDamage(runId, scan.damage).catch(() => undefined);
      throw damaged({ file: journal, ...scan.damage });
    }
    if (!whole) return scan;
    // A fork's own first record is its `fork` record, after the parent's records.
    const first = scan.records.find((r) => r.type === 'fork' && r.runId === runId) ?? scan.records[0];
    if (!first || (first.type !== 'run' && first.type !== 'fork'))
      throw new StoreError(`${journal} holds no complete run record`, 'damaged', journal, 0);
    // A journal copied or moved from another run's folder is not this run's.
    if (first.runId !== runId)
      throw new StoreError(`${journal} is the journal of run ${first.runId}, not of run ${runId}: refused`, 'invalid', journal, 0);
    return scan;
  }

  /** @internal */
  async recordDamage(runId: string, damage: { offset: number; message: string }): Promise<void> {
    await writeDamage(this.device, runId, { file: this.device.journalName(runId), ...damage, at: this.settings.clock.now() });
  }
}

function damaged(damage: JournalDamage): StoreError {
  return new StoreError(`${damage.file} is damaged at byte ${damage.offset}: ${damage.message}`, 'damaged', damage.file, damage.offset);
}
