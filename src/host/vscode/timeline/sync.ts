import type { Patch } from '../../../core/patches/schema';
import { StoreError, type RunState, type RunSummary } from '../../../core/store/contract';
import type { StoredRecord } from '../../../core/store/records';
import { patchView, runDelta, sameData } from './view-build';
import type { HostToWebview, RunDeltaMessage, SnapshotMessage } from '../../../protocol/messages';
import type { PatchView, RunHeader, RunView, StepRow } from '../../../protocol/viewModel';
import type { TimelineBackend, TimelineChange } from './backend';
import type { RunFold } from './run-fold';
import { RunFolds } from './run-folds';

type SyncBackend = Pick<TimelineBackend, 'listRuns' | 'readRun' | 'liveStates'> & {
  /** Agent hunks of the run still waiting for Keep or Undo (the inline review); unset: none. */
  readonly reviewCount?: (runId: string) => number;
};

/** Changes gathered while the debounce timer runs; drained as one batch. */
export class ChangeQueue {
  private runs = false;
  private readonly records = new Set<string>();
  private readonly paths = new Set<string>();

  add(change: TimelineChange): void {
    // What waits for review shows on the runs' headers: compared with the listing as a change of runs is.
    if (change.kind === 'runs' || change.kind === 'review') this.runs = true;
    else if (change.kind === 'records') this.records.add(change.runId);
    else for (const path of change.paths) this.paths.add(path);
  }

  get empty(): boolean {
    return !this.runs && this.records.size === 0 && this.paths.size === 0;
  }

  drain(): { runs: boolean; records: string[]; paths: string[] } {
    const batch = { runs: this.runs, records: [...this.records], paths: [...this.paths] };
    this.runs = false;
    this.records.clear();
    this.paths.clear();
    return batch;
  }
}

/** What the header shows besides the records: who holds the run, how many changes wait for review. */
function headerChanged(summary: RunSummary, sent: RunView, reviewCount: number): boolean {
  const elsewhere = summary.heldHere === false ? summary.holder?.pid : undefined;
  return (
    summary.leased !== sent.header.active || elsewhere !== sent.header.heldElsewhere?.pid || reviewCount !== (sent.header.reviewCount ?? 0)
  );
}

/** Steps of a run the snapshot carries: the first paint parses no more than the view can show soon. */
export const FIRST_STEPS = 200;
/** Steps per delta that follows the snapshot with a long run's later steps. */
const STEP_CHUNK = 2000;

/** The index of the first sent step at or after `stepId`. */
function stepIndex(steps: readonly StepRow[], stepId: number): number {
  let i = steps.length;
  while (i > 0 && steps[i - 1]!.stepId >= stepId) i--;
  return i;
}

/**
 * Keeps what the webview was last sent, per run, and turns changes into the smallest messages:
 * a snapshot on `ready`, then run deltas and patch live-state changes. Runs are read through the
 * window's one fold per run (run-folds.ts), which the records the runtime emits advance in
 * memory; only the steps they touched since this view last built are built again.
 */
export class TimelineSync {
  private readonly sent = new Map<string, RunView>();
  /** The fold each sent view was built from: another one (read again since) is compared whole. */
  private readonly builtFrom = new Map<string, RunFold>();
  /** The lowest step the records touched since the view was built, by run (Infinity: only the header). */
  private readonly touched = new Map<string, number>();
  private summaries = new Map<string, RunSummary>();
  /** Runs the opening listed whose view is not sent yet (`listed` gives each): a change of the listing does not build them. */
  private unsent = new Set<string>();

  constructor(
    private readonly backend: SyncBackend,
    private readonly folds: RunFolds = new RunFolds((runId) => backend.readRun(runId)),
  ) {}

  private fold(runId: string): Promise<RunFold> {
    return this.folds.get(runId);
  }

  /** The run's folded state (for actions: it copies the ledger). */
  async state(runId: string): Promise<RunState> {
    return (await this.fold(runId)).state();
  }

  async findPatch(runId: string, patchId: string): Promise<Patch | undefined> {
    return (await this.fold(runId)).patch(patchId);
  }

  /**
   * Records were appended to a run: folded in (once for the window) when the runtime gave them
   * and they follow what is folded; otherwise (another process, an action, a gap) the run is read
   * again when needed.
   */
  recordsChanged(runId: string, records?: readonly StoredRecord[]): void {
    const touched = this.folds.recordsChanged(runId, records);
    if (touched === false) this.touched.delete(runId);
    else this.touched.set(runId, Math.min(touched, this.touched.get(runId) ?? Infinity));
  }

  private takeTouched(runId: string): number {
    const touched = this.touched.get(runId) ?? Infinity;
    this.touched.delete(runId);
    return touched;
  }

  private async refreshSummaries(): Promise<RunSummary[]> {
    const list = await this.backend.listRuns();
    // A damaged run stays listed: its intact part is shown read-only.
    this.summaries = new Map(list.map((s) => [s.runId, s]));
    return [...this.summaries.values()];
  }

  /** The run's fold; undefined (and the run left out) when not even its run record reads. */
  private async readable(runId: string): Promise<RunFold | undefined> {
    try {
      return await this.fold(runId);
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      this.summaries.delete(runId);
      return undefined;
    }
  }

  private header(runId: string, fold: RunFold): RunHeader {
    const summary = this.summaries.get(runId);
    const holder = summary?.heldHere === false ? summary.holder : undefined;
    const elsewhere = holder ? { pid: holder.pid, hostname: holder.hostname, heartbeatAt: holder.renewedAt } : undefined;
    const header = fold.header(summary?.leased ?? false, elsewhere);
    const review = this.reviewCount(runId);
    return review > 0 ? { ...header, reviewCount: review } : header;
  }

  /** The whole view of a run, built from its fold (read again when another view let its earlier histories go). */
  private async view(runId: string): Promise<RunView | undefined> {
    if (this.folds.peek(runId)?.canBuild(0) === false) this.folds.drop(runId);
    const fold = await this.readable(runId);
    if (!fold) return undefined;
    this.touched.delete(runId);
    this.builtFrom.set(runId, fold);
    const live = await this.backend.liveStates([...fold.patches].filter((p) => p.state === 'pending'));
    return { header: this.header(runId, fold), steps: fold.steps(live) };
  }

  /** The update for a run whose sent view is current up to the steps its new records touched. */
  /** undefined: the touched steps lie before what the fold keeps (the run is read again). */
  private async tailDelta(
    runId: string,
    fold: RunFold,
    sent: RunView,
  ): Promise<{ view: RunView; delta: RunDeltaMessage | null } | undefined> {
    const header = this.header(runId, fold);
    const touched = this.takeTouched(runId);
    if (touched === Infinity) {
      const view = { header, steps: sent.steps };
      return { view, delta: sameData(header, sent.header) ? null : { type: 'runDelta', header, fromStep: sent.steps.length, steps: [] } };
    }
    const start = fold.tailStart(touched);
    if (!fold.canBuild(start.index)) return undefined;
    const tail = fold.steps(await this.backend.liveStates(fold.pendingFrom(start.stepId)), start.index);
    let from = stepIndex(sent.steps, start.stepId);
    let k = 0;
    while (k < tail.length && from + k < sent.steps.length && sameData(tail[k], sent.steps[from + k])) k++;
    from += k;
    const steps = tail.slice(k);
    const view = { header, steps: sent.steps.slice(0, from).concat(steps) };
    const unchanged = steps.length === 0 && from === sent.steps.length && sameData(header, sent.header);
    return { view, delta: unchanged ? null : { type: 'runDelta', header, fromStep: from, steps } };
  }

  private reviewCount(runId: string): number {
    return this.backend.reviewCount?.(runId) ?? 0;
  }

  /**
   * What the view is sent on `ready`: a snapshot of one run (`first`, else the newest), then its
   * later steps in chunks; `rest` names the other runs, newest first, each for `listed`. The
   * first paint waits for one run's read, not for every run's (many long runs: seconds).
   */
  async opening(first?: string): Promise<{ messages: [SnapshotMessage, ...RunDeltaMessage[]]; rest: string[] }> {
    this.sent.clear();
    const order = (await this.refreshSummaries()).sort(
      (a, b) => Number(b.runId === first) - Number(a.runId === first) || b.createdAt - a.createdAt,
    );
    this.unsent = new Set(order.map((s) => s.runId));
    for (const [i, summary] of order.entries()) {
      const parts = await this.sendable(summary.runId);
      if (parts)
        return { messages: [{ type: 'snapshot', runs: [parts.run] }, ...parts.chunks], rest: order.slice(i + 1).map((s) => s.runId) };
    }
    return { messages: [{ type: 'snapshot', runs: [] }], rest: [] };
  }

  /** A run of the opening's rest, whole, unless a change sent it already or it went (or it reads no more). */
  async listed(runId: string): Promise<RunView | undefined> {
    if (!this.unsent.delete(runId)) return undefined;
    const view = await this.view(runId);
    if (view) this.sent.set(runId, view);
    return view;
  }

  /** Every run at once (tests, benches): the opening's snapshot with the rest's runs added, then the first run's later steps in chunks. */
  async snapshot(): Promise<[SnapshotMessage, ...RunDeltaMessage[]]> {
    const { messages, rest } = await this.opening();
    for (const runId of rest) {
      const view = await this.listed(runId);
      if (view) messages[0].runs.push(view);
    }
    return messages;
  }

  /** The run's view, kept as sent: its first steps, and its later ones in chunks. */
  private async sendable(runId: string): Promise<{ run: RunView; chunks: RunDeltaMessage[] } | undefined> {
    this.unsent.delete(runId);
    const view = await this.view(runId);
    if (!view) return undefined;
    this.sent.set(runId, view);
    const chunks: RunDeltaMessage[] = [];
    for (let from = FIRST_STEPS; from < view.steps.length; from += STEP_CHUNK)
      chunks.push({ type: 'runDelta', header: view.header, fromStep: from, steps: view.steps.slice(from, from + STEP_CHUNK) });
    return { run: { header: view.header, steps: view.steps.slice(0, FIRST_STEPS) }, chunks };
  }

  /** Messages for one batch of changes, in order. */
  async apply(batch: { runs: boolean; records: readonly string[]; paths: readonly string[] }): Promise<HostToWebview[]> {
    const messages: HostToWebview[] = [];
    const touched = new Set(batch.records);
    if (batch.runs) {
      const before = new Set(this.summaries.keys());
      const list = await this.refreshSummaries();
      for (const runId of before) {
        if (this.summaries.has(runId)) continue;
        this.forget(runId);
        messages.push({ type: 'runRemoved', runId });
      }
      for (const summary of list.filter((s) => !this.unsent.has(s.runId)))
        if (!this.sent.has(summary.runId) || headerChanged(summary, this.sent.get(summary.runId)!, this.reviewCount(summary.runId)))
          touched.add(summary.runId);
    }
    for (const runId of touched) {
      if (!this.summaries.has(runId)) await this.refreshSummaries();
      if (!this.summaries.has(runId)) continue;
      const message = await this.update(runId);
      if (message) messages.push(message);
    }
    if (batch.paths.length > 0) messages.push(...(await this.liveChanged(new Set(batch.paths), touched)));
    return messages;
  }

  /** The message that brings the view of one run up to date, if any. */
  private async update(runId: string): Promise<HostToWebview | null> {
    const sent = this.sent.get(runId);
    const fold = this.folds.peek(runId);
    if (sent && fold && this.builtFrom.get(runId) === fold) {
      const tail = await this.tailDelta(runId, fold, sent);
      if (tail) {
        this.sent.set(runId, tail.view);
        return tail.delta;
      }
      this.folds.drop(runId);
    }
    this.unsent.delete(runId);
    const next = await this.view(runId);
    if (!next) {
      this.forget(runId);
      return sent ? { type: 'runRemoved', runId } : null;
    }
    this.sent.set(runId, next);
    return runDelta(sent, next);
  }

  /** While no webview listens: drop what the batch made stale, build nothing. */
  invalidate(batch: { runs: boolean; records: readonly string[] }): void {
    if (batch.runs) this.summaries.clear();
  }

  private forget(runId: string): void {
    this.sent.delete(runId);
    this.unsent.delete(runId);
    this.folds.drop(runId);
    this.builtFrom.delete(runId);
    this.touched.delete(runId);
  }

  private async liveChanged(paths: ReadonlySet<string>, alreadyFresh: ReadonlySet<string>): Promise<HostToWebview[]> {
    const messages: HostToWebview[] = [];
    for (const [runId, view] of this.sent) {
      if (alreadyFresh.has(runId)) continue;
      const fold = await this.fold(runId);
      const affected = [...fold.patches].filter((p) => p.state === 'pending' && paths.has(p.path));
      if (affected.length === 0) continue;
      const live = await this.backend.liveStates(affected);
      const changes = affected.map((p) => ({ patchId: p.patchId, state: patchView(p, live.get(p.patchId)) }));
      const changed = changes.filter((c) => currentState(view, c.patchId) !== c.state);
      if (changed.length === 0) continue;
      this.sent.set(runId, withPatchStates(view, new Map(changed.map((c) => [c.patchId, c.state]))));
      messages.push({ type: 'patchLive', runId, changes: changed });
    }
    return messages;
  }
}

function currentState(view: RunView, patchId: string): string | undefined {
  for (const step of view.steps)
    for (const call of step.calls) for (const patch of call.patches) if (patch.patchId === patchId) return patch.state;
  return undefined;
}

function withPatchStates(view: RunView, states: ReadonlyMap<string, PatchView>): RunView {
  const steps = view.steps.map((step) => {
    if (!step.calls.some((c) => c.patches.some((p) => states.has(p.patchId)))) return step;
    return {
      ...step,
      calls: step.calls.map((call) => ({
        ...call,
        patches: call.patches.map((p) => (states.has(p.patchId) ? { ...p, state: states.get(p.patchId)! } : p)),
      })),
    };
  });
  return { header: view.header, steps };
}
