import { systemClock, type Clock } from '../../src/core/ports';
import {
  StoreError,
  type CheckpointStore,
  type ForkRequest,
  type GcResult,
  type LeaseInfo,
  type RunState,
  type RunSummary,
  type RunWriter,
  type VerifyReport,
} from '../../src/core/store/contract';
import type { FileStoreOptions } from '../../src/core/store/file/file-store';
import { sha256Hex } from '../../src/core/patches/hash';
import {
  DEFAULT_LEASE_TIMEOUT_MS,
  isLeaseStale,
  newHolderId,
  newLease,
  unknownProcess,
  type ProcessIdentity,
} from '../../src/core/store/lease-policy';
import { foldRecord, startFold, type FoldState } from '../../src/core/store/fold';
import { foldInSlices, foldRecords } from '../../src/core/store/history';
import type { RunRecord, StoredRecord } from '../../src/core/store/records';
import { blobRefs, runRefs } from '../../src/core/store/refs';
import { planRetention, type RetentionPolicy } from '../../src/core/store/retention';
import { resumeStateOf, type ResumeState } from '../../src/core/store/resume-state';
import { StoreRunWriter, type AppendGroup, type WriterDevice } from '../../src/core/store/run-writer';
import { stampRecords } from '../../src/core/store/stamp';

export type MemoryStoreOptions = Pick<FileStoreOptions, 'clock' | 'leaseTimeoutMs' | 'process' | 'blobGraceMs'>;

interface MemoryRun {
  /** Its own records (a fork's begin with its `fork` record). */
  readonly records: StoredRecord[];
  /** A fork: the parent's records up to the one it stands on come first. */
  readonly parent?: { readonly run: MemoryRun; readonly seq: number };
  bytes: number;
  /** The run's state, folded as records are appended. */
  readonly fold: FoldState;
  updatedAt: number;
  lease: LeaseInfo | null;
}

/**
 * The CheckpointStore in memory, with the same semantics (lease included) as the file store: a
 * second backend that the conformance suite runs, and a fast store for the runtime's tests. No
 * host ships it, so it lives with the tests.
 */
export class MemoryCheckpointStore implements CheckpointStore {
  private readonly runs = new Map<string, MemoryRun>();
  private readonly blobs = new Map<string, { bytes: Uint8Array; putAt: number }>();
  private readonly clock: Clock;
  private readonly leaseTimeoutMs: number;
  private readonly me: ProcessIdentity;
  private readonly blobGraceMs: number;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.leaseTimeoutMs = options.leaseTimeoutMs ?? DEFAULT_LEASE_TIMEOUT_MS;
    this.me = options.process ?? unknownProcess;
    this.blobGraceMs = options.blobGraceMs ?? 10 * 60_000;
  }

  async createRun(run: Omit<RunRecord, 'v' | 'at' | 'type'>): Promise<RunWriter> {
    if (this.runs.has(run.runId)) throw new StoreError(`run ${run.runId} already exists`, 'invalid');
    const now = this.clock.now();
    const [record] = stampRecords([{ ...run, type: 'run' }], 1, now);
    const entry: MemoryRun = {
      records: [record!],
      bytes: JSON.stringify(record).length + 1,
      fold: startFold(record),
      updatedAt: now,
      lease: null,
    };
    this.runs.set(run.runId, entry);
    return this.acquire(run.runId, entry);
  }

  async openWriter(runId: string): Promise<RunWriter> {
    return this.acquire(runId, this.runOf(runId));
  }

  async readRun(runId: string, options?: { atCheckpoint?: string }): Promise<RunState> {
    return foldRecords(recordsOf(this.runOf(runId)), options);
  }

  async readResumeState(runId: string): Promise<ResumeState> {
    return structuredClone(resumeStateOf(this.runOf(runId).fold));
  }

  async readRecords(runId: string): Promise<readonly StoredRecord[]> {
    return recordsOf(this.runOf(runId));
  }

  async forkRun(parentId: string, fork: ForkRequest): Promise<RunSummary> {
    const parent = this.runOf(parentId);
    if (this.runs.has(fork.runId)) throw new StoreError(`run ${fork.runId} already exists`, 'invalid');
    if (!Number.isInteger(fork.step) || fork.step < 1 || fork.step > parent.fold.stepId)
      throw new StoreError(`run ${parentId} has no step ${fork.step} to fork from (it has ${parent.fold.stepId})`, 'invalid');
    const now = this.clock.now();
    const seq = parent.fold.lastSeq;
    const point = {
      runId: parentId,
      step: fork.step,
      seq,
      files: fork.files,
      ...(fork.checkpointId ? { checkpointId: fork.checkpointId } : {}),
    };
    const [record] = stampRecords([{ type: 'fork', runId: fork.runId, createdAt: now, parent: point }], seq + 1, now);
    const run: MemoryRun = {
      records: [record!],
      parent: { run: parent, seq },
      bytes: JSON.stringify(record).length + 1,
      fold: await foldInSlices([...recordsOf(parent).slice(0, seq), record!], undefined),
      updatedAt: now,
      lease: null,
    };
    this.runs.set(fork.runId, run);
    return (await this.listRuns()).find((s) => s.runId === fork.runId)!;
  }

  async listRuns(): Promise<readonly RunSummary[]> {
    const now = this.clock.now();
    return [...this.runs.entries()].map(([runId, run]) => {
      const first = run.fold.run;
      const leased = this.isLive(run.lease, now);
      return {
        runId,
        task: first.task,
        createdAt: first.createdAt,
        ...(first.parent ? { parent: { runId: first.parent.runId, step: first.parent.step } } : {}),
        status: run.fold.status,
        updatedAt: run.updatedAt,
        steps: run.fold.stepId,
        leased,
        ...(leased && run.lease ? { holder: run.lease } : {}),
        ...(run.fold.firstInstruction !== undefined ? { instruction: run.fold.firstInstruction } : {}),
      };
    });
  }

  async putBlob(bytes: Uint8Array): Promise<string> {
    const hash = sha256Hex(bytes);
    if (!this.blobs.has(hash)) this.blobs.set(hash, { bytes: new Uint8Array(bytes), putAt: this.clock.now() });
    return hash;
  }

  async getBlob(hash: string): Promise<Uint8Array> {
    const blob = this.blobs.get(hash);
    if (!blob) throw new StoreError(`blob ${hash} not found`, 'not_found');
    return new Uint8Array(blob.bytes);
  }

  async verify(runId: string): Promise<VerifyReport> {
    const run = this.runOf(runId);
    const missing = new Set<string>();
    for (const record of recordsOf(run)) for (const hash of blobRefs(record)) if (!this.blobs.has(hash)) missing.add(hash);
    return { runId, ok: missing.size === 0, records: run.records.length, missingBlobs: [...missing] };
  }

  async collectGarbage(policy: RetentionPolicy): Promise<GcResult> {
    const now = this.clock.now();
    // A run a fork stands on stays while the fork does (the one list of run references, refs.ts).
    const standOn = new Set([...this.runs.values()].flatMap((run) => recordsOf(run).flatMap(runRefs)));
    const usage = [...this.runs.entries()].map(([runId, run]) => ({
      runId,
      status: run.fold.status,
      updatedAt: run.updatedAt,
      bytes: run.bytes,
      protected: this.isLive(run.lease, now) || standOn.has(runId),
      blobs: new Set(recordsOf(run).flatMap(blobRefs)),
    }));
    const sizes = new Map([...this.blobs.entries()].map(([hash, blob]) => [hash, blob.bytes.length]));
    const removedRuns = planRetention(usage, sizes, policy);
    let freedBytes = 0;
    for (const runId of removedRuns) {
      freedBytes += this.runs.get(runId)!.bytes;
      this.runs.delete(runId);
    }
    const referenced = new Set(usage.filter((u) => !removedRuns.includes(u.runId)).flatMap((u) => [...u.blobs]));
    let removedBlobs = 0;
    for (const [hash, blob] of this.blobs) {
      if (referenced.has(hash) || now - blob.putAt < this.blobGraceMs) continue;
      this.blobs.delete(hash);
      freedBytes += blob.bytes.length;
      removedBlobs++;
    }
    return { removedRuns, removedBlobs, freedBytes };
  }

  private runOf(runId: string): MemoryRun {
    const run = this.runs.get(runId);
    if (!run) throw new StoreError(`run ${runId} not found`, 'not_found');
    return run;
  }

  private isLive(lease: LeaseInfo | null, now: number): boolean {
    return lease !== null && !isLeaseStale(lease, now, this.leaseTimeoutMs, this.me);
  }

  private acquire(runId: string, run: MemoryRun): RunWriter {
    const now = this.clock.now();
    if (this.isLive(run.lease, now)) throw new StoreError(`run ${runId} is held by ${run.lease!.holderId}`, 'lease_held');
    const holderId = newHolderId();
    const lease = (run.lease = newLease(holderId, now, this.me));
    const device = new MemoryWriterDevice(run, holderId, this.blobs, { clock: this.clock, leaseTimeoutMs: this.leaseTimeoutMs });
    const start = { fold: structuredClone(run.fold), lastSeq: run.fold.lastSeq, journalBytes: run.bytes, snapshotAt: run.bytes };
    return new StoreRunWriter(device, runId, holderId, lease, start);
  }
}

/** The writer's primitives over one run in memory: a third device of the one store writer, in a few lines. */
class MemoryWriterDevice implements WriterDevice {
  readonly clock: Clock;
  readonly timers = undefined;
  readonly leaseTimeoutMs: number;
  readonly snapshotStepBytes = Infinity;
  readonly stopsOnAnyFailure = false;

  constructor(
    private readonly run: MemoryRun,
    private readonly holderId: string,
    private readonly blobs: ReadonlyMap<string, unknown>,
    options: { clock: Clock; leaseTimeoutMs: number },
  ) {
    this.clock = options.clock;
    this.leaseTimeoutMs = options.leaseTimeoutMs;
  }

  async missingBlobs(hashes: readonly string[]): Promise<readonly string[]> {
    return hashes.filter((hash) => !this.blobs.has(hash));
  }

  async appendGroup({ records, now }: AppendGroup, lease: LeaseInfo): Promise<LeaseInfo> {
    const { run } = this;
    this.hold(lease);
    // A fork's branch records need the parent's records before its own.
    const journal = run.parent ? recordsOf(run) : run.records;
    for (const record of records) {
      foldRecord(run.fold, record, { records: journal });
      if (journal !== run.records) journal.push(record);
      run.records.push(record);
      run.bytes += JSON.stringify(record).length + 1;
    }
    run.updatedAt = now;
    return run.lease!;
  }

  async renewLease(lease: LeaseInfo): Promise<LeaseInfo> {
    this.hold(lease);
    return (this.run.lease = { ...this.run.lease!, renewedAt: this.clock.now() });
  }

  /** Throws lease_lost unless `lease` (holder and generation) still holds the run. */
  private hold(lease: LeaseInfo): void {
    const held = this.run.lease;
    if (held?.holderId !== this.holderId || held.generation !== lease.generation)
      throw new StoreError('the lease of this run was taken over by another writer', 'lease_lost');
  }

  async appended(): Promise<void> {}

  async putSnapshot(): Promise<number | null> {
    return null;
  }

  async reopen(): Promise<FoldState> {
    return structuredClone(this.run.fold);
  }

  async release(): Promise<void> {
    if (this.run.lease?.holderId === this.holderId) this.run.lease = null;
  }

  async cutBack(): Promise<void> {}

  abandon(): void {}

  async closeHandle(): Promise<void> {}

  ioError(error: unknown): StoreError {
    return new StoreError(String(error), 'io');
  }
}

/** A run's records; a fork's begin with its parent's, up to the one it stands on. */
function recordsOf(run: MemoryRun): StoredRecord[] {
  return run.parent ? [...recordsOf(run.parent.run).slice(0, run.parent.seq), ...run.records] : [...run.records];
}
