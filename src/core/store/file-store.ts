import { systemClock, type Clock, type Timers } from '../ports';
import {
  StoreError,
  type CheckpointStore,
  type JournalDamage,
  type LeaseInfo,
  type ReadRunOptions,
  type RunState,
  type RunSummary,
  type RunWriter,
  type TornTailCut,
  type VerifyReport,
} from './contract';
import { FileBlobs } from './file-blobs';
import { collectFileGarbage } from './file-gc';
import { acquireLease, fenceLease, liveLease, readLease, releaseLease, type LeaseContext } from './file-lease';
import { crc32 } from './crc32';
import { FileRunWriter } from './file-run-writer';
import type { IndexState } from './index-writer';
import { errorMessage, isExists, isNotFound, joinPath, mkdirpDurable, type StoreFs } from './fs-port';
import { encodeGroup, JournalScanner, type JournalScan } from './journal-format';
import { readIndexFile, type IndexedPrefix } from './journal-index';
import { addLinesOf, type JournalLog, type ReadOptions } from './journal-log';
import { LineColumns } from './line-columns';
import { DEFAULT_LEASE_TIMEOUT_MS, newHolderId, unknownProcess, type ProcessIdentity } from './lease-policy';
import { latestStatus, materialiseInSlices } from './materialise';
import { MIGRATIONS, type MigrationTable } from './migrations';
import { FORMAT_VERSION, type RunRecord, type StoredRecord } from './records';
import { blobRefs } from './refs';
import type { RetentionPolicy } from './retention';
import { JOURNAL, readDamageFile, readStateFile, sameState, writeDamageFile, writeStateFile, type RunStateFile } from './run-files';
import { stampRecords } from './stamp';

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
  /** The resume index gains a segment each time a journal has grown by this much (journal-index.ts); shorter journals get none. */
  readonly indexStepBytes?: number;
}

const INDEX_STEP_BYTES = 1 << 20;

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

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
  private readonly stateIntervalMs: number;
  private readonly indexStepBytes: number;
  /** Holders of this process whose writer stopped on an I/O error: their lease may be taken at once. */
  readonly abandoned = new Set<string>();
  /**
   * The records openWriter just read, handed to the next readRecords/readRun of the same run
   * (a resume opens the writer, then reads the run: one read of the journal, not two). Dropped
   * when that writer first appends or closes, and not used when the journal's size changed (a
   * writer that took the lease over meanwhile).
   */
  private readonly openedRecords = new Map<string, { log: JournalLog; goodLength: number }>();
  private rootReady = false;

  constructor(options: FileStoreOptions) {
    this.fs = options.fs;
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
    this.indexStepBytes = options.indexStepBytes ?? INDEX_STEP_BYTES;
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
    const now = this.clock.now();
    const stamped = stampRecords([{ ...run, type: 'run' }], 1, now);
    await this.ensureRoot();
    if (await this.fs.stat(journal)) throw new StoreError(`run ${run.runId} already exists`, 'invalid', journal);
    await this.fs.mkdirp(dir);
    await this.fs.syncDir(this.runsDir);
    const holderId = newHolderId();
    const ctx = this.leaseContext(run.runId);
    const lease = await acquireLease(ctx, holderId, this.abandoned);
    try {
      const handle = await this.fs.openExclusive(journal).catch((error: unknown) => {
        throw isExists(error) ? new StoreError(`run ${run.runId} already exists`, 'invalid', journal) : error;
      });
      const bytes = encodeGroup(stamped);
      const state: Omit<RunStateFile, 'v'> = {
        runId: run.runId,
        task: run.task,
        createdAt: run.createdAt,
        status: 'running',
        lastSeq: 1,
        updatedAt: now,
        steps: 0,
        journalBytes: bytes.length,
      };
      try {
        await this.fs.write(handle, bytes);
        await this.fs.sync(handle);
        await this.fs.syncDir(dir);
        await writeStateFile(this.fs, dir, state);
      } catch (error) {
        await this.fs.close(handle).catch(() => undefined);
        throw error;
      }
      const columns = new LineColumns();
      addLinesOf(columns, bytes, 0, this.readOptions(journal));
      return this.writer(run.runId, handle, holderId, lease, state, {
        columns,
        crc: crc32(bytes),
        indexedBytes: 0,
        fileBytes: 0,
        lines: 0,
        keys: 0,
      });
    } catch (error) {
      await releaseLease(ctx, holderId).catch(() => this.abandoned.add(holderId));
      throw this.asStoreError(error, journal);
    }
  }

  async openWriter(runId: string): Promise<RunWriter> {
    const journal = this.journalPath(runId);
    if (!(await this.fs.stat(journal))) throw new StoreError(`run ${runId} not found`, 'not_found', journal);
    const holderId = newHolderId();
    const ctx = this.leaseContext(runId);
    const lease = await acquireLease(ctx, holderId, this.abandoned);
    try {
      const scan = this.checkedScan(runId, await this.scanJournalOf(runId));
      let tornTailCut: RunStateFile['tornTailCut'];
      if (scan.tornTail) {
        await this.fs.truncate(journal, scan.goodLength);
        tornTailCut = { ...scan.tornTail, at: this.clock.now() };
      }
      const stored = await readStateFile(this.fs, ctx.runDir);
      const state = this.stateFromRecords(runId, scan, tornTailCut ?? stored?.tornTailCut);
      const handle = await this.fs.openAppend(journal);
      try {
        // A writer that closed cleanly left the state file current: rewriting it would only cost fsyncs.
        if (!stored || !sameState(stored, state)) await writeStateFile(this.fs, ctx.runDir, state);
      } catch (error) {
        await this.fs.close(handle).catch(() => undefined);
        throw error;
      }
      const opened = { log: scan.log, goodLength: scan.goodLength };
      this.openedRecords.set(runId, opened);
      const dropOpened = () => {
        if (this.openedRecords.get(runId) === opened) this.openedRecords.delete(runId);
      };
      const { indexFile } = scan;
      const index = {
        columns: scan.log.columns.clone(),
        crc: scan.crc,
        indexedBytes: scan.indexedBytes,
        fileBytes: indexFile.bytes,
        lines: indexFile.lines,
        keys: indexFile.keys,
      };
      const cut = scan.tornTail ? { file: journal, offset: scan.tornTail.offset, bytes: scan.tornTail.bytes } : undefined;
      return this.writer(runId, handle, holderId, lease, state, index, dropOpened, cut);
    } catch (error) {
      await releaseLease(ctx, holderId).catch(() => this.abandoned.add(holderId));
      throw this.asStoreError(error, journal);
    }
  }

  async readRun(runId: string, options?: ReadRunOptions): Promise<RunState> {
    const pause = this.fs.yieldToEventLoop?.bind(this.fs);
    if (!options?.intactPart) return materialiseInSlices(await this.readLog(runId), options, pause);
    const scan = await this.scanJournalOf(runId);
    // No damage, or not even a run record before it: read as without intactPart.
    if (!scan.damage || scan.log.length === 0) return materialiseInSlices(this.checkedScan(runId, scan).log, options, pause);
    await this.recordDamage(runId, this.journalPath(runId), scan.damage).catch(() => undefined);
    const damage: JournalDamage = { file: this.journalPath(runId), ...scan.damage };
    return Object.assign(await materialiseInSlices(scan.log, options, pause), { damage });
  }

  async readRecords(runId: string): Promise<readonly StoredRecord[]> {
    return (await this.readLog(runId)).records();
  }

  private async readLog(runId: string): Promise<JournalLog> {
    const opened = this.openedRecords.get(runId);
    if (opened) {
      this.openedRecords.delete(runId);
      if ((await this.fs.stat(this.journalPath(runId)))?.size === opened.goodLength) return opened.log;
    }
    return this.checkedScan(runId, await this.scanJournalOf(runId)).log;
  }

  /**
   * @internal The run's journal scanned; with a port that reads in pieces, each piece is parsed
   * while the next is read. With `useIndex`, the lines the resume index holds are not read again
   * when the bytes they cover are unchanged. Throws not_found when the run has no journal.
   */
  async scanJournalOf(runId: string, useIndex = true): Promise<JournalScan> {
    const indexed = useIndex ? await readIndexFile(this.fs, this.runDir(runId), this.readVersion) : null;
    const scan = await this.scanWith(runId, indexed);
    // Damage is reported only as every line shows it, never on an index's word.
    return scan.index === 'used' && scan.damage ? this.scanWith(runId, null) : scan;
  }

  private async scanWith(runId: string, indexed: IndexedPrefix | null): Promise<JournalScan> {
    const journal = this.journalPath(runId);
    const scanner = new JournalScanner(journal, this.migrations, this.readVersion, indexed ?? undefined);
    let bytes: Uint8Array;
    try {
      bytes = this.fs.readFileInPieces
        ? await this.fs.readFileInPieces(journal, (prefix) => scanner.feed(prefix))
        : await this.fs.readFile(journal);
    } catch (error) {
      if (isNotFound(error)) throw new StoreError(`run ${runId} not found`, 'not_found', journal);
      throw error;
    }
    return scanner.finish(bytes);
  }

  async listRuns(): Promise<readonly RunSummary[]> {
    let names: string[];
    try {
      names = await this.fs.readdir(this.runsDir);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
    const summaries: RunSummary[] = [];
    for (const name of names.sort()) {
      const summary = await this.summaryOf(name);
      if (summary) summaries.push(summary);
    }
    return summaries;
  }

  async lease(runId: string): Promise<LeaseInfo | null> {
    return readLease(this.leaseContext(runId));
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
    const journal = this.journalPath(runId);
    let scan: JournalScan;
    try {
      scan = await this.scanJournalOf(runId, false);
    } catch (error) {
      if (error instanceof StoreError && error.code === 'not_found') throw error;
      const message = errorMessage(error);
      return { runId, ok: false, records: 0, damage: { file: journal, offset: 0, message }, missingBlobs: [] };
    }
    // Messages, ledger entries and checkpoints are checked against their schemas when first read; verify reads them all.
    const decoded = scan.log.decodeAll();
    const { records } = decoded;
    if (decoded.damage && !scan.damage) scan = { ...scan, damage: decoded.damage };
    const missing = new Set<string>();
    for (const record of records) for (const hash of blobRefs(record)) if (!(await this.blobs.has(hash))) missing.add(hash);
    const tornTail = scan.tornTail ?? (await readStateFile(this.fs, this.runDir(runId)))?.tornTailCut;
    const report: VerifyReport = {
      runId,
      ok: !scan.damage && missing.size === 0 && records.length > 0,
      records: records.length,
      missingBlobs: [...missing],
      ...(tornTail ? { tornTail: { offset: tornTail.offset, bytes: tornTail.bytes } } : {}),
      ...(scan.damage ? { damage: { file: journal, ...scan.damage } } : {}),
    };
    if (scan.damage) await this.recordDamage(runId, journal, scan.damage);
    return report;
  }

  async collectGarbage(policy: RetentionPolicy): Promise<{ removedRuns: string[]; removedBlobs: number; freedBytes: number }> {
    return collectFileGarbage(this, policy);
  }

  /** @internal A journal's scan, checked: damage is recorded beside it and thrown, nothing is changed. */
  checkedScan(runId: string, scan: JournalScan): JournalScan {
    const journal = this.journalPath(runId);
    if (scan.damage) {
      void this.recordDamage(runId, journal, scan.damage).catch(() => undefined);
      throw new StoreError(
        `${journal} is damaged at byte ${scan.damage.offset}: ${scan.damage.message}`,
        'damaged',
        journal,
        scan.damage.offset,
      );
    }
    if (scan.log.length === 0 || scan.log.typeAt(0) !== 'run') {
      throw new StoreError(`${journal} holds no complete run record`, 'damaged', journal, 0);
    }
    const first = scan.log.record(0);
    // A journal copied or moved from another run's folder is not this run's.
    if (first.type === 'run' && first.runId !== runId)
      throw new StoreError(`${journal} is the journal of run ${first.runId}, not of run ${runId}: refused`, 'invalid', journal, 0);
    return scan;
  }

  private async recordDamage(runId: string, journal: string, damage: { offset: number; message: string }): Promise<void> {
    await writeDamageFile(this.fs, this.runDir(runId), { file: journal, ...damage, at: this.clock.now() });
  }

  private stateFromRecords(runId: string, scan: JournalScan, tornTailCut: RunStateFile['tornTailCut']): Omit<RunStateFile, 'v'> {
    const { log } = scan;
    const run = log.record(0) as RunRecord;
    const last = log.record(log.length - 1);
    return {
      runId,
      task: run.task,
      createdAt: run.createdAt,
      status: latestStatus(log),
      lastSeq: last.seq,
      updatedAt: last.at,
      steps: log.maxStepId,
      journalBytes: scan.goodLength,
      ...(tornTailCut ? { tornTailCut } : {}),
    };
  }

  private async summaryOf(runId: string): Promise<RunSummary | null> {
    if (!RUN_ID.test(runId)) return null;
    const dir = this.runDir(runId);
    const journal = joinPath(dir, JOURNAL);
    if (!(await this.fs.stat(journal))) return null;
    const live = await liveLease(this.leaseContext(runId), this.abandoned);
    const leased = live !== null;
    const holder =
      live !== null && live !== 'unreadable'
        ? { holder: live, heldHere: live.pid === this.me.pid && live.hostname === this.me.hostname && live.startTime === this.me.startTime }
        : {};
    const damage = await readDamageFile(this.fs, dir);
    const state = await readStateFile(this.fs, dir);
    const damaged = damage ? `${damage.file} at byte ${damage.offset}: ${damage.message}` : undefined;
    if (state) {
      const { task, createdAt, status, updatedAt, steps } = state;
      return { runId, task, createdAt, status, updatedAt, steps, leased, ...holder, ...(damaged ? { damaged } : {}) };
    }
    try {
      const s = this.stateFromRecords(runId, this.checkedScan(runId, await this.scanJournalOf(runId)), undefined);
      return { runId, task: s.task, createdAt: s.createdAt, status: s.status, updatedAt: s.updatedAt, steps: s.steps, leased, ...holder };
    } catch (error) {
      return { runId, task: '', createdAt: 0, status: 'interrupted', updatedAt: 0, steps: 0, leased, damaged: errorMessage(error) };
    }
  }

  private readOptions(journal: string): ReadOptions {
    return { file: journal, migrations: this.migrations, readVersion: this.readVersion };
  }

  private writer(
    runId: string,
    handle: Awaited<ReturnType<StoreFs['openAppend']>>,
    holderId: string,
    lease: LeaseInfo,
    state: Omit<RunStateFile, 'v'>,
    index: Omit<IndexState, 'read' | 'stepBytes'>,
    onFirstChange?: () => void,
    tornTailCut?: TornTailCut,
  ): RunWriter {
    return new FileRunWriter({
      fs: this.fs,
      clock: this.clock,
      ...(this.timers ? { timers: this.timers } : {}),
      lease: this.leaseContext(runId),
      blobs: this.blobs,
      journalPath: this.journalPath(runId),
      handle,
      holderId,
      leaseInfo: lease,
      state,
      stateIntervalMs: this.stateIntervalMs,
      onAbandon: (id) => this.abandoned.add(id),
      index: { ...index, read: this.readOptions(this.journalPath(runId)), stepBytes: this.indexStepBytes },
      ...(onFirstChange ? { onFirstChange } : {}),
      ...(tornTailCut ? { tornTailCut } : {}),
    });
  }

  private async ensureRoot(): Promise<void> {
    if (this.rootReady) return;
    // The store folder itself is often new (VS Code's storageUri, the CLI's --store): its name must be durable too.
    await mkdirpDurable(this.fs, this.runsDir);
    await mkdirpDurable(this.fs, this.blobs.root);
    this.rootReady = true;
  }

  private asStoreError(error: unknown, file: string): StoreError {
    if (error instanceof StoreError) return error;
    return new StoreError(`store I/O failed on ${file}: ${errorMessage(error)}`, 'io', file);
  }
}
