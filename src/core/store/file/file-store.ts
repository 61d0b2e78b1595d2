import { systemClock, type Clock, type Timers } from '../../ports';
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
} from '../contract';
import { AppendNotice, watchLeaseFiles } from './append-notice';
import { FileBlobs } from './file-blobs';
import { appendFileDecisions } from './file-decisions';
import { firstSeqOf, forkFileRun, openForkFromParent, parentRecords } from './file-fork';
import { collectFileGarbage } from './file-gc';
import { acquireLease, fenceLease, releaseLease, type LeaseContext } from './file-lease';
import { listFileRuns, verifyFileRun } from './file-listing';
import { fileRunWriter } from './file-run-writer';
import { rememberLines, resumeFromSnapshot, type RecordLines } from './file-snapshots';
import { runStateOf, startFold, type FoldState } from '../fold';
import { foldInSlices } from '../history';
import { factsOfRun } from '../listing-facts';
import { pointAt, readRunFacts, runFacts, writeFactsFile } from './run-facts';
import { writeNewFile } from '../atomic-file';
import { errorMessage, isExists, isNotFound, joinPath, mkdirpDurable, type StoreFs } from '../fs-port';
import { encodeGroup, scanJournal, type JournalScan } from '../journal-format';
import { DEFAULT_LEASE_TIMEOUT_MS, newHolderId, unknownProcess, type ProcessIdentity } from '../lease-policy';
import { MIGRATIONS, type MigrationTable } from '../migrations';
import { FORMAT_VERSION, type RunRecord, type StoredRecord } from '../records';
import type { RetentionPolicy } from '../retention';
import { resumeStateOf, type ResumeState } from '../resume-state';
import { JOURNAL, readDamageFile, readStateFile, sameState, stateFileOf, writeDamageFile, writeStateFile } from './run-files';
import { RUN_ID } from '../run-id';
import { stampRecords } from '../stamp';

export interface FileStoreOptions {
  readonly fs: StoreFs;
  /** Folder that holds runs/ and blobs/. */
  readonly root: string;
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
  /** state.json is rewritten at most this often unless the status changes. */
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

/** The durable CheckpointStore: one folder per run (journal, state, lease) and shared blobs. */
export class FileCheckpointStore implements CheckpointStore {
  readonly fs: StoreFs;
  readonly root: string;
  readonly runsDir: string;
  readonly blobs: FileBlobs;
  readonly clock: Clock;
  readonly timers: Timers | undefined;
  readonly leaseTimeoutMs: number;
  readonly me: ProcessIdentity;
  readonly migrations: MigrationTable;
  readonly readVersion: number;
  readonly blobGraceMs: number;
  readonly stateIntervalMs: number;
  readonly snapshotStepBytes: number;
  readonly forkSpan: number | undefined;
  /** Holders of this process whose writer stopped on an I/O error: their lease may be taken at once. */
  readonly abandoned = new Set<string>();
  /** @internal Tells other holders' appends from this object's own (which note their size here). */
  readonly appends: AppendNotice;
  private rootReady = false;
  /** @internal Asked between slices of a long read: lets the event loop run when enough time went by. */
  readonly pause: (() => Promise<void>) | undefined;

  constructor(options: FileStoreOptions) {
    this.fs = options.fs;
    this.pause = options.fs.yieldToEventLoop?.bind(options.fs);
    this.root = options.root;
    this.runsDir = joinPath(options.root, 'runs');
    this.blobs = new FileBlobs(options.fs, joinPath(options.root, 'blobs'));
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers;
    this.leaseTimeoutMs = options.leaseTimeoutMs ?? DEFAULT_LEASE_TIMEOUT_MS;
    this.me = options.process ?? unknownProcess;
    this.migrations = options.migrations ?? MIGRATIONS;
    this.readVersion = options.readVersion ?? FORMAT_VERSION;
    this.blobGraceMs = options.blobGraceMs ?? 10 * 60_000;
    this.stateIntervalMs = options.stateIntervalMs ?? 1000;
    this.snapshotStepBytes = options.snapshotStepBytes ?? 256 << 10;
    this.forkSpan = options.forkSpan;
    this.appends = new AppendNotice(options.fs, this.runsDir);
  }

  runDir(runId: string): string {
    if (!RUN_ID.test(runId)) throw new StoreError(`not a valid run id: ${JSON.stringify(runId)}`, 'invalid');
    return joinPath(this.runsDir, runId);
  }

  journalPath(runId: string): string {
    return joinPath(this.runDir(runId), JOURNAL);
  }

  leaseContext(runId: string): LeaseContext {
    return { fs: this.fs, runDir: this.runDir(runId), timeoutMs: this.leaseTimeoutMs, me: this.me, now: () => this.clock.now() };
  }

  async createRun(run: Omit<RunRecord, 'v' | 'at' | 'type'>): Promise<RunWriter> {
    const dir = this.runDir(run.runId);
    const journal = this.journalPath(run.runId);
    const stamped = stampRecords([{ ...run, type: 'run' }], 1, this.clock.now());
    const exists = () => new StoreError(`run ${run.runId} already exists`, 'invalid', journal);
    await this.ensureRoot();
    if (await this.fs.stat(journal)) throw exists();
    await this.fs.mkdirp(dir);
    await this.fs.syncDir(this.runsDir);
    return this.withLease(run.runId, async (holderId, lease) => {
      const bytes = encodeGroup(stamped);
      this.appends.wrote(run.runId, bytes.length);
      await writeNewFile(this.fs, journal, bytes).catch((error: unknown) => Promise.reject(isExists(error) ? exists() : error));
      await this.fs.syncDir(dir);
      const opened = { fold: startFold(stamped[0]), scan: { records: stamped, goodLength: bytes.length }, snapshotAt: 0 };
      return this.startWriter(run.runId, holderId, lease, opened);
    });
  }

  async openWriter(runId: string): Promise<RunWriter> {
    const journal = this.journalPath(runId);
    if (!(await this.fs.stat(journal))) throw new StoreError(`run ${runId} not found`, 'not_found', journal);
    return this.withLease(runId, async (holderId, lease) => {
      // A writer reads only the journal after the newest snapshot: damage a whole read found before it refuses writers too.
      const known = await readDamageFile(this.fs, this.runDir(runId));
      if (known) throw damaged(known);
      const opened = await this.openRun(runId);
      const { tornTail, goodLength } = opened.scan;
      if (tornTail) this.appends.wrote(runId, goodLength);
      if (tornTail) await this.fs.truncate(journal, goodLength);
      return this.startWriter(runId, holderId, lease, opened, tornTail && { file: journal, ...tornTail });
    });
  }

  /** The writer of a run just opened (or created) under a new lease: state.json brought up to date first. */
  private async startWriter(runId: string, holderId: string, lease: LeaseInfo, opened: OpenedRun, cut?: TornTailCut): Promise<RunWriter> {
    const dir = this.runDir(runId);
    const stored = await readStateFile(this.fs, dir);
    await this.pause?.();
    const { fold, scan } = opened;
    // The time of the last record: state.json's when it stands at that record (a snapshot does not carry it).
    const current = stored?.lastSeq === fold.lastSeq ? stored.updatedAt : undefined;
    const updatedAt = scan.records.at(-1)?.at ?? current ?? fold.latestCheckpoint?.at ?? fold.run.at;
    const tornTailCut = cut ? { offset: cut.offset, bytes: cut.bytes, at: this.clock.now() } : stored?.tornTailCut;
    // From a whole fold, else pending.json with the journal after it (rebuilt from the whole journal
    // when it does not hold). A resume needs the pending count, not the run's blob references: the
    // writer reads refs.json only when it first writes it (refsKnown false), off the resume's path.
    const known = { from: opened.snapshotAt, end: scan.goodLength, records: scan.records };
    const pending = opened.snapshotAt === 0 ? null : await readRunFacts(this, runId, known, ['pending']).catch(() => null);
    const refsKnown = opened.snapshotAt === 0 || pending === null;
    const facts = opened.snapshotAt === 0 ? factsOfRun(fold, scan.records) : (pending ?? (await runFacts(this, runId, known)));
    await this.pause?.();
    // Its readers (GC while the run goes on) then fold only the journal after this point.
    if (opened.snapshotAt === 0)
      await writeFactsFile(this, runId, facts, await pointAt(this, runId, scan.goodLength, fold.lastSeq)).catch(() => undefined);
    const state = stateFileOf(fold, scan.goodLength, updatedAt, tornTailCut, facts.pending.size);
    // A writer that closed cleanly left the state file current: rewriting it would only cost fsyncs.
    if (!sameState(stored, state)) await writeStateFile(this.fs, dir, state);
    const handle = await this.fs.openAppend(this.journalPath(runId));
    return fileRunWriter(this, handle, holderId, lease, state, opened, facts, refsKnown, cut);
  }

  /** Runs `open` holding a new lease of the run; the lease is released when it fails. */
  private async withLease(runId: string, open: (holderId: string, lease: LeaseInfo) => Promise<RunWriter>): Promise<RunWriter> {
    const holderId = newHolderId();
    const ctx = this.leaseContext(runId);
    const lease = await acquireLease(ctx, holderId, this.abandoned);
    try {
      return await open(holderId, lease);
    } catch (error) {
      await releaseLease(ctx, holderId).catch(() => this.abandoned.add(holderId));
      if (error instanceof StoreError) throw error;
      const journal = this.journalPath(runId);
      throw new StoreError(`store I/O failed on ${journal}: ${errorMessage(error)}`, 'io', journal);
    }
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
    const journal = this.journalPath(runId);
    const read = { file: journal, migrations: this.migrations, readVersion: this.readVersion };
    const resumed = await resumeFromSnapshot(this.fs, this.runDir(runId), runId, read, this.pause);
    if (resumed) return { ...resumed, scan: await this.checkedScan(runId, resumed.scan, false) };
    // A fork without a snapshot of its own: from its parent's snapshots, not its parent's whole journal.
    const forked = await openForkFromParent(this, runId);
    if (forked) return forked;
    const lines: RecordLines = new WeakMap();
    const scan = await this.checkedScan(runId, await this.scanJournalOf(runId, lines));
    return { fold: await foldInSlices(scan.records, undefined, this.pause), scan, snapshotAt: 0, lines };
  }

  async readRun(runId: string, options?: ReadRunOptions): Promise<RunState> {
    const scan = await this.scanJournalOf(runId);
    // Without damage, or without even a run record before it, intactPart reads as a whole read does.
    if (!options?.intactPart || !scan.damage || scan.records.length === 0)
      return runStateOf(await foldInSlices((await this.checkedScan(runId, scan)).records, options, this.pause));
    await this.recordDamage(runId, scan.damage).catch(() => undefined);
    const state = runStateOf(await foldInSlices(scan.records, options, this.pause));
    return { ...state, damage: { file: this.journalPath(runId), ...scan.damage } };
  }

  async readRecords(runId: string): Promise<readonly StoredRecord[]> {
    return (await this.checkedScan(runId, await this.scanJournalOf(runId))).records;
  }

  /**
   * @internal The whole journal of a run, scanned; a fork's records begin with the parent's it
   * stands on (offsets stay those of its own file; `lines` learns its own messages' and entries').
   * Throws not_found when the run has no journal.
   */
  async scanJournalOf(runId: string, lines?: RecordLines): Promise<JournalScan> {
    const journal = this.journalPath(runId);
    const bytes = await this.fs.readFile(journal).catch((error: unknown) => {
      throw isNotFound(error) ? new StoreError(`run ${runId} not found`, 'not_found', journal) : error;
    });
    const read = { file: journal, migrations: this.migrations, readVersion: this.readVersion, firstSeq: firstSeqOf(bytes) };
    const scan = await scanJournal(bytes, read, this.pause);
    if (lines) rememberLines(lines, bytes, 0, scan.records);
    const first = scan.records[0];
    if (first?.type !== 'fork' || scan.damage) return scan;
    return { ...scan, records: [...(await parentRecords(this, first)), ...scan.records] };
  }

  async forkRun(parentId: string, fork: ForkRequest): Promise<RunSummary> {
    return forkFileRun(this, parentId, fork);
  }

  async listRuns(): Promise<readonly RunSummary[]> {
    return listFileRuns(this);
  }

  watchAppends(listener: (runId: string) => void): { close(): void } {
    return this.appends.watch(listener) ?? { close: () => undefined };
  }

  watchLeases(listener: (runId: string) => void): { close(): void } {
    return watchLeaseFiles(this.fs, this.runsDir, listener);
  }

  async appendDecisions(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]> {
    const light = await appendFileDecisions(this, runId, records);
    if (light) return light;
    const writer = await this.openWriter(runId);
    try {
      return await writer.append(records);
    } finally {
      await writer.close();
    }
  }

  async fenceLease(runId: string): Promise<void> {
    if (!(await this.fs.stat(this.journalPath(runId)))) throw new StoreError(`run ${runId} not found`, 'not_found');
    await fenceLease(this.leaseContext(runId));
  }

  async putBlob(bytes: Uint8Array): Promise<string> {
    await this.ensureRoot();
    return this.blobs.put(bytes);
  }

  async getBlob(hash: string): Promise<Uint8Array> {
    return this.blobs.get(hash);
  }

  async verify(runId: string): Promise<VerifyReport> {
    return verifyFileRun(this, runId);
  }

  async collectGarbage(policy: RetentionPolicy): Promise<GcResult> {
    return collectFileGarbage(this, policy);
  }

  /** @internal A journal's scan, checked: damage is recorded beside it and thrown, nothing is changed. With `whole`, it must begin with this run's record. */
  async checkedScan(runId: string, scan: JournalScan, whole = true): Promise<JournalScan> {
    const journal = this.journalPath(runId);
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
    await writeDamageFile(this.fs, this.runDir(runId), { file: this.journalPath(runId), ...damage, at: this.clock.now() });
  }

  /** @internal */
  async ensureRoot(): Promise<void> {
    if (this.rootReady) return;
    // The store folder itself is often new (VS Code's storageUri, the CLI's --store): its name must be durable too.
    await mkdirpDurable(this.fs, this.runsDir);
    await mkdirpDurable(this.fs, this.blobs.root);
    this.rootReady = true;
  }
}

function damaged(damage: JournalDamage): StoreError {
  return new StoreError(`${damage.file} is damaged at byte ${damage.offset}: ${damage.message}`, 'damaged', damage.file, damage.offset);
}
