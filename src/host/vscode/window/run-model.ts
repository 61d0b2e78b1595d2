import * as vscode from 'vscode';
import { z } from 'zod';
import type { RuntimeEvent } from '../../../core/runtime';
import type { CheckpointStore, DecisionRecord, RunSummary } from '../../../core/store/contract';
import type { StoredRecord } from '../../../core/store/records';
import { WindowStore } from './window-store';

/** What changed in the window's runs, so each surface reads again only that. */
export type RunEvent =
  /** A run was created or removed, or who holds one changed. */
  | { readonly kind: 'runs' }
  /** Records were appended to a run: the records, when a writer of this window wrote them. */
  | { readonly kind: 'records'; readonly runId: string; readonly records?: readonly StoredRecord[] }
  /** Live content of files changed (typing, save, revert, external change); workspace paths. */
  | { readonly kind: 'live'; readonly paths: readonly string[] }
  /** What waits for review changed (the count on a run's header). */
  | { readonly kind: 'review' };

/** Text the model is writing now, as the runtime streams it. */
export interface StreamChunk {
  readonly runId: string;
  readonly stepId: number;
  readonly text: string;
  readonly at: number;
}

/** Where the window keeps its selected run (workspaceState): read back through the schema. */
export const SELECTED_RUN_KEY = 'agentCheckpoints.selectedRun';
export const SelectedRun = z.object({ v: z.literal(1), runId: z.string().min(1).max(200) });

/** The part of a Memento the model uses (workspaceState). */
export interface SelectionMemory {
  get(key: string): unknown;
  update(key: string, value: unknown): Thenable<void>;
}

/** A listing older than this is read again (no journal: the runs' state and lease files). */
const LISTING_MAX_AGE_MS = 2000;
/** Lease notices closer than this are one change (taking and releasing a lease are several). */
const LEASE_EVENTS_MS = 150;
/** Live changes of files are gathered this long into one event. */
const LIVE_DEBOUNCE_MS = 150;

/**
 * The window's run model: the one place the window's surfaces (Timeline views and tabs, the
 * review, the conversation, the context keys) learn about runs from. It owns every input: the
 * writers of the window (through `store`, which publishes what they append), the store's change
 * and lease notices (other holders' appends; who holds what, on the file store and PostgreSQL
 * alike), the live changes of the editors and the file system, the controller's transient events
 * (streamed text, approvals), and the window's selected run (the one the tree, the conversation
 * and the composer follow), kept across reloads in workspaceState.
 */
export class RunModel implements vscode.Disposable {
  private readonly changes = new vscode.EventEmitter<RunEvent>();
  readonly onDidChange = this.changes.event;
  private readonly streams = new vscode.EventEmitter<StreamChunk>();
  readonly onDidStream = this.streams.event;
  private readonly approvals = new vscode.EventEmitter<void>();
  /** The calls waiting for a decision changed. */
  readonly onDidChangeApprovals = this.approvals.event;
  private readonly selection = new vscode.EventEmitter<string | undefined>();
  readonly onDidSelect = this.selection.event;
  /** The store as the window uses it: writers publish their appends, reads of journals are counted. */
  readonly store: WindowStore;
  private listing: Promise<readonly RunSummary[]> | undefined;
  private listedAt = 0;
  private notices: { close(): void }[] = [];
  private leaseTimer: ReturnType<typeof setTimeout> | undefined;
  private leaseListing: Promise<void> | undefined;
  /** This window's decisions being appended (each holds its run's lease meanwhile). */
  private readonly deciding = new Set<Promise<unknown>>();
  private pendingLive = new Set<string>();
  private liveTimer: ReturnType<typeof setTimeout> | undefined;
  /** The step each running run is in (its latest save point), so streamed text lands in it. */
  private readonly stepOf = new Map<string, number>();
  private selectedRun: string | undefined;
  private reviewCounts: ReadonlyMap<string, number> = new Map();
  private readonly owned: vscode.Disposable[] = [];

  constructor(
    inner: CheckpointStore,
    private readonly ready: Promise<void> = Promise.resolve(),
    private readonly memory?: SelectionMemory,
  ) {
    this.store = new WindowStore(inner, {
      publish: (runId, records) => this.publish(runId, records),
      runsChanged: () => this.runsChanged(),
      forked: (runId) => this.select(runId),
      listRuns: () => this.listRuns(0),
      appendDecisions: (runId, records) => this.appendDecisions(runId, records),
    });
    const saved = SelectedRun.safeParse(memory?.get(SELECTED_RUN_KEY));
    this.selectedRun = saved.success ? saved.data.runId : undefined;
  }

  /** Journal reads made through `store` so far (a test and the bench count them). */
  get journalReads(): number {
    return this.store.journalReads;
  }

  /** Inputs the model holds from now on (editor and watcher subscriptions): disposed with it. */
  own(...disposables: vscode.Disposable[]): void {
    this.owned.push(...disposables);
  }

  /** Starts the store's notices: appends of other holders become events, lease changes a listing compared. */
  watch(): void {
    if (this.notices.length > 0) return;
    const appends = this.store.watchAppends?.((runId) => {
      this.listing = undefined;
      this.changes.fire({ kind: 'records', runId });
    });
    const leases = this.store.watchLeases?.(() => this.leaseChanged());
    this.notices = [appends, leases].filter((n) => n !== undefined);
  }

  /** Records a writer of this window appended. */
  publish(runId: string, records: readonly StoredRecord[]): void {
    this.listing = undefined;
    this.changes.fire({ kind: 'records', runId, records });
  }

  /** A run was created or removed, or who holds one changed: the listing is read again. */
  runsChanged(): void {
    this.listing = undefined;
    this.changes.fire({ kind: 'runs' });
  }

  /**
   * The store told that a lease may have changed hands: the listing is read again once the burst
   * is over (taking and releasing one lease is several notices).
   */
  leaseChanged(): void {
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
    if (before !== after) this.changes.fire({ kind: 'runs' });
  }

  /**
   * The run listing with its facts, read from the store once per change, and again once older
   * than `maxAgeMs` (a holder that died leaves its lease as it was: only time tells).
   */
  listRuns(maxAgeMs = LISTING_MAX_AGE_MS): Promise<readonly RunSummary[]> {
    if (this.listing === undefined || Date.now() - this.listedAt > maxAgeMs) {
      this.listedAt = Date.now();
      this.listing = this.ready.then(() => this.store.listInner());
    }
    const listing = this.listing;
    listing.catch(() => {
      if (this.listing === listing) this.listing = undefined;
    });
    return listing;
  }

  /** Keep, Undo, Accept: the store's light path (or a writer opened, appended, closed), published. */
  async appendDecisions(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]> {
    const deciding = this.store.appendDecisionsInner(runId, records);
    this.deciding.add(deciding);
    try {
      const stored = await deciding;
      this.publish(runId, stored);
      return stored;
    } finally {
      this.deciding.delete(deciding);
    }
  }

  /** A file's live content changed: one `live` event per burst names every path changed in it. */
  liveChanged(path: string): void {
    this.pendingLive.add(path);
    this.liveTimer ??= setTimeout(() => {
      this.liveTimer = undefined;
      const paths = [...this.pendingLive];
      this.pendingLive = new Set();
      this.changes.fire({ kind: 'live', paths });
    }, LIVE_DEBOUNCE_MS);
  }

  /** An event of this window's runtime: save points place the streamed text, which goes out at once. */
  runtimeEvent(event: RuntimeEvent): void {
    if (event.type === 'checkpoint') this.stepOf.set(event.runId, event.checkpoint.stepId);
    // The words the newest models write between tool calls arrive as thinking: streamed the same way.
    else if (event.type === 'model' && (event.event.type === 'text' || event.event.type === 'thinking') && event.event.text !== '')
      this.streams.fire({ runId: event.runId, stepId: this.stepOf.get(event.runId) ?? 0, text: event.event.text, at: Date.now() });
  }

  /** A run of this window stopped: its step is forgotten. */
  runEnded(runId: string): void {
    this.stepOf.delete(runId);
  }

  /** The calls waiting for a decision changed. */
  approvalsChanged(): void {
    this.approvals.fire();
  }

  /** The window's selected run: the one the tree, the conversation and the composer follow. */
  get selected(): string | undefined {
    return this.selectedRun;
  }

  /** Selects a run (a person's pick, a run started here, a fork made here); kept for the next reload. */
  select(runId: string | undefined): void {
    if (runId === this.selectedRun) return;
    this.selectedRun = runId;
    void this.memory?.update(SELECTED_RUN_KEY, runId === undefined ? undefined : SelectedRun.parse({ v: 1, runId }));
    this.selection.fire(runId);
  }

  /** Hunks of a run waiting for Keep or Undo, as the review last told. */
  reviewCount(runId: string): number {
    return this.reviewCounts.get(runId) ?? 0;
  }

  /** The review tells what waits per run; surfaces hear of it when it changed. */
  setReviewCounts(counts: ReadonlyMap<string, number>): void {
    const same = counts.size === this.reviewCounts.size && [...counts].every(([id, n]) => this.reviewCounts.get(id) === n);
    this.reviewCounts = counts;
    if (!same) this.changes.fire({ kind: 'review' });
  }

  dispose(): void {
    if (this.leaseTimer !== undefined) clearTimeout(this.leaseTimer);
    if (this.liveTimer !== undefined) clearTimeout(this.liveTimer);
    for (const notice of this.notices) notice.close();
    for (const d of this.owned) d.dispose();
    for (const emitter of [this.changes, this.streams, this.approvals, this.selection]) emitter.dispose();
  }
}
