import type {
  CheckpointStore,
  DecisionRecord,
  ForkRequest,
  GcResult,
  ReadRunOptions,
  RunState,
  RunSummary,
  RunWriter,
  VerifyReport,
} from '../../../core/store/contract';
import type { RetentionPolicy } from '../../../core/store/retention';
import type { ResumeState } from '../../../core/store/resume-state';
import type { RunRecord, StoredRecord } from '../../../core/store/records';

/** What the window's store tells the run model, and asks of it. */
export interface StoreHooks {
  /** Records a writer of this window appended. */
  publish(runId: string, records: readonly StoredRecord[]): void;
  /** A run was created or removed, or who holds one changed. */
  runsChanged(): void;
  /** A fork was made in this window (a person's fork or restore): the window follows it. */
  forked(runId: string): void;
  /** The listing, read afresh (the model keeps it for its surfaces). */
  listRuns(): Promise<readonly RunSummary[]>;
  /** Keep, Undo, Accept: appended and published by the model. */
  appendDecisions(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]>;
}

/**
 * The store as the window uses it: every writer of the window writes through it, so what it
 * appends is published to the run model; reads of a journal (whole, or from its newest snapshot)
 * are counted, for the tests and the benches. A typed wrapper: every member of the contract is
 * written out here (the checks below fail the build when the contract gains or renames one).
 */
export class WindowStore implements CheckpointStore {
  /** Journal reads made through this store so far. */
  journalReads = 0;
  readonly fenceLease?: (runId: string) => Promise<void>;
  readonly watchAppends?: (listener: (runId: string) => void) => { close(): void };
  readonly watchLeases?: (listener: (runId: string) => void) => { close(): void };

  constructor(
    private readonly inner: CheckpointStore,
    private readonly hooks: StoreHooks,
  ) {
    if (inner.fenceLease) this.fenceLease = (runId) => inner.fenceLease!(runId);
    if (inner.watchAppends) this.watchAppends = (listener) => inner.watchAppends!(listener);
    if (inner.watchLeases) this.watchLeases = (listener) => inner.watchLeases!(listener);
  }

  private counted<T>(read: () => Promise<T>): Promise<T> {
    this.journalReads++;
    return read();
  }

  async createRun(run: Omit<RunRecord, 'v' | 'at' | 'type'>): Promise<RunWriter> {
    const writer = this.publishing(await this.inner.createRun(run));
    this.hooks.runsChanged();
    return writer;
  }

  async openWriter(runId: string): Promise<RunWriter> {
    const writer = this.publishing(await this.counted(() => this.inner.openWriter(runId)));
    this.hooks.runsChanged(); // who holds the run changed (the lease notice may find the listing already read since)
    return writer;
  }

  readRun(runId: string, options?: ReadRunOptions): Promise<RunState> {
    return this.counted(() => this.inner.readRun(runId, options));
  }

  readResumeState(runId: string): Promise<ResumeState> {
    return this.counted(() => this.inner.readResumeState(runId));
  }

  readRecords(runId: string): Promise<readonly StoredRecord[]> {
    return this.counted(() => this.inner.readRecords(runId));
  }

  verify(runId: string): Promise<VerifyReport> {
    return this.counted(() => this.inner.verify(runId));
  }

  async forkRun(parentId: string, fork: ForkRequest): Promise<RunSummary> {
    const summary = await this.inner.forkRun(parentId, fork);
    this.hooks.runsChanged();
    this.hooks.forked(summary.runId);
    return summary;
  }

  /** Always read afresh: whether a lease is live also depends on time and on its holder's process. */
  listRuns(): Promise<readonly RunSummary[]> {
    return this.hooks.listRuns();
  }

  putBlob(bytes: Uint8Array): Promise<string> {
    return this.inner.putBlob(bytes);
  }

  getBlob(hash: string): Promise<Uint8Array> {
    return this.inner.getBlob(hash);
  }

  appendDecisions(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]> {
    return this.hooks.appendDecisions(runId, records);
  }

  /** The inner store's light path of a decision, or a writer opened, appended and closed (counted: it reads the journal). */
  async appendDecisionsInner(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]> {
    if (this.inner.appendDecisions) return this.inner.appendDecisions(runId, records);
    const writer = await this.counted(() => this.inner.openWriter(runId));
    try {
      return await writer.append(records);
    } finally {
      await writer.close();
    }
  }

  async collectGarbage(policy: RetentionPolicy): Promise<GcResult> {
    const result = await this.inner.collectGarbage(policy);
    if (result.removedRuns.length > 0) this.hooks.runsChanged();
    return result;
  }

  /** The listing of the inner store (no cache). */
  listInner(): Promise<readonly RunSummary[]> {
    return this.inner.listRuns();
  }

  private publishing(writer: RunWriter): RunWriter {
    return {
      runId: writer.runId,
      holderId: writer.holderId,
      resumeState: writer.resumeState,
      ...(writer.tornTailCut ? { tornTailCut: writer.tornTailCut } : {}),
      append: async (records) => {
        const stored = await writer.append(records);
        this.hooks.publish(writer.runId, stored);
        return stored;
      },
      renewLease: () => writer.renewLease(),
      close: async () => {
        await writer.close();
        this.hooks.runsChanged(); // who holds the run changed
      },
    };
  }
}

/** The members of WindowStore beyond the contract: none may be a contract member under an old name. */
type Extra = Exclude<keyof WindowStore, keyof CheckpointStore>;
const EXTRA_MEMBERS: Record<Extra, true> = { journalReads: true, appendDecisionsInner: true, listInner: true };
/** Every contract member, optional ones included, is written out above. */
type Missing = Exclude<keyof CheckpointStore, keyof WindowStore>;
export const CONTRACT_COVERED: [Missing] extends [never] ? typeof EXTRA_MEMBERS : never = EXTRA_MEMBERS;
