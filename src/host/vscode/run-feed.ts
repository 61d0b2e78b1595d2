import * as vscode from 'vscode';
import type { CheckpointStore, DecisionRecord, RunSummary, RunWriter } from '../../core/store/contract';
import type { StoredRecord } from '../../core/store/records';

/** What the feed tells: runs created, removed or held otherwise; records appended to a run (the records, when written in this window). */
export type RunEvent =
  { readonly kind: 'runs' } | { readonly kind: 'records'; readonly runId: string; readonly records?: readonly StoredRecord[] };

/** A listing older than this is read again (no journal: the runs' state and lease files). */
const LISTING_MAX_AGE_MS = 2000;
/** Lease file events closer than this are one change (taking and releasing a lease are several). */
const LEASE_EVENTS_MS = 150;

/** Store calls that read a journal (whole, or from its newest snapshot). */
const JOURNAL_READS = new Set<string | symbol>(['readRun', 'readRecords', 'readResumeState', 'openWriter', 'verify']);

/**
 * The one feed of run events of a window. Every writer of the window writes through `store`,
 * which publishes what it appended; the store's change notice adds other holders' appends; a
 * lease heartbeat is no event of records. The Timeline, the review, the status bar and the
 * palette state subscribe here, and read the run listing (with its facts) from here.
 */
export class RunFeed implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<RunEvent>();
  readonly onDidChange = this.emitter.event;
  /** The store as the window uses it: writers publish their appends, reads of journals are counted. */
  readonly store: CheckpointStore;
  /** Journal reads made through `store` so far (a test and the bench count them). */
  journalReads = 0;
  private listing: Promise<readonly RunSummary[]> | undefined;
  private listedAt = 0;
  private notice: { close(): void } | undefined;
  private leaseTimer: ReturnType<typeof setTimeout> | undefined;
  private leaseListing: Promise<void> | undefined;
  /** This window's decisions being appended (each holds its run's lease meanwhile). */
  private readonly deciding = new Set<Promise<unknown>>();

  constructor(
    private readonly inner: CheckpointStore,
    private readonly ready: Promise<void> = Promise.resolve(),
  ) {
    const own: Partial<CheckpointStore> = {
      createRun: async (run) => {
        const writer = this.publishing(await inner.createRun(run));
        this.runsChanged();
        return writer;
      },
      openWriter: async (runId) => {
        const writer = this.publishing(await inner.openWriter(runId));
        this.runsChanged(); // who holds the run changed (the lease file's watcher may find the listing already read since)
        return writer;
      },
      forkRun: async (parentId, fork) => {
        const summary = await inner.forkRun(parentId, fork);
        this.runsChanged();
        return summary;
      },
      // Always read afresh: whether a lease is live also depends on time and on its holder's process.
      listRuns: () => this.listRuns(0),
      appendDecisions: (runId, records) => this.appendDecisions(runId, records),
      collectGarbage: async (policy) => {
        const result = await inner.collectGarbage(policy);
        if (result.removedRuns.length > 0) this.runsChanged();
        return result;
      },
    };
    this.store = new Proxy(inner, {
      get: (target, prop) => {
        const mine = (own as Record<string | symbol, unknown>)[prop];
        if (mine !== undefined) {
          if (prop === 'openWriter') return (runId: string) => (this.journalReads++, own.openWriter!(runId));
          return mine;
        }
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        return JOURNAL_READS.has(prop) ? (...args: unknown[]) => (this.journalReads++, bound(...args)) : bound;
      },
    });
  }

  /** Starts the store's change notice: appends of other holders become events. */
  watch(): void {
    this.notice ??= this.inner.watchAppends?.((runId) => {
      this.listing = undefined;
      this.emitter.fire({ kind: 'records', runId });
    });
  }

  /** Records a writer of this window appended. */
  publish(runId: string, records: readonly StoredRecord[]): void {
    this.listing = undefined;
    this.emitter.fire({ kind: 'records', runId, records });
  }

  /** A run was created or removed, or who holds one changed: the listing is read again. */
  runsChanged(): void {
    this.listing = undefined;
    this.emitter.fire({ kind: 'runs' });
  }

  /**
   * A lease file was taken, released or renewed (its watcher's event): the listing is read again
   * once the burst is over (taking and releasing one lease is several events).
   */
  leaseFileChanged(): void {
    this.leaseTimer ??= setTimeout(() => {
      this.leaseTimer = undefined;
      this.leaseListing = this.leasesChanged().catch(() => undefined);
    }, LEASE_EVENTS_MS);
  }

  /** Settles once the lease changes told so far are read (none waiting, none being read). */
  async settled(): Promise<void> {
    while (this.leaseTimer !== undefined || this.leaseListing !== undefined) {
      const listing = this.leaseListing;
      if (listing) await listing;
      else await new Promise((resolve) => setTimeout(resolve, LEASE_EVENTS_MS));
      if (this.leaseListing === listing) this.leaseListing = undefined;
    }
  }

  /**
   * The runs are listed again, and an event fires only when who holds which run changed (a
   * heartbeat only moves the renewal time: no event). A decision of this window holds its run's
   * lease for a moment: the listing waits for those in flight, so that it never takes one for
   * another holder's.
   */
  async leasesChanged(): Promise<void> {
    await Promise.allSettled([...this.deciding]);
    const holders = (list: readonly RunSummary[]) =>
      list.map((r) => `${r.runId}:${r.leased}:${r.holder?.holderId ?? ''}:${r.holder?.generation ?? ''}`).join('\n');
    const before = this.listing && holders(await this.listing.catch(() => []));
    this.listing = undefined;
    const after = holders(await this.listRuns());
    if (before !== after) this.emitter.fire({ kind: 'runs' });
  }

  /**
   * The run listing with its facts, read from the store once per change, and again once older
   * than `maxAgeMs` (a holder that died leaves its lease file as it was: only time tells).
   */
  listRuns(maxAgeMs = LISTING_MAX_AGE_MS): Promise<readonly RunSummary[]> {
    if (this.listing === undefined || Date.now() - this.listedAt > maxAgeMs) {
      this.listedAt = Date.now();
      this.listing = this.ready.then(() => this.inner.listRuns());
    }
    const listing = this.listing;
    listing.catch(() => {
      if (this.listing === listing) this.listing = undefined;
    });
    return listing;
  }

  /** Keep, Undo, Accept: the store's light path (or a writer opened, appended, closed), published. */
  async appendDecisions(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]> {
    const deciding = this.decide(runId, records);
    this.deciding.add(deciding);
    try {
      return await deciding;
    } finally {
      this.deciding.delete(deciding);
    }
  }

  private async decide(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]> {
    let stored: readonly StoredRecord[];
    if (this.inner.appendDecisions) stored = await this.inner.appendDecisions(runId, records);
    else {
      this.journalReads++;
      const writer = await this.inner.openWriter(runId);
      try {
        stored = await writer.append(records);
      } finally {
        await writer.close();
      }
    }
    this.publish(runId, stored);
    return stored;
  }

  private publishing(writer: RunWriter): RunWriter {
    return {
      runId: writer.runId,
      holderId: writer.holderId,
      resumeState: writer.resumeState,
      ...(writer.tornTailCut ? { tornTailCut: writer.tornTailCut } : {}),
      append: async (records) => {
        const stored = await writer.append(records);
        this.publish(writer.runId, stored);
        return stored;
      },
      renewLease: () => writer.renewLease(),
      close: async () => {
        await writer.close();
        this.runsChanged(); // who holds the run changed
      },
    };
  }

  dispose(): void {
    if (this.leaseTimer !== undefined) clearTimeout(this.leaseTimer);
    this.notice?.close();
    this.emitter.dispose();
  }
}
