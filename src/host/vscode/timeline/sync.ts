import type { Patch } from '../../../core/patches/schema';
import { StoreError, type RunState, type RunSummary } from '../../../core/store/contract';
import { buildRunView, patchView, runDelta } from '../../../protocol/build';
import type { HostToWebview, SnapshotMessage } from '../../../protocol/messages';
import type { PatchView, RunView } from '../../../protocol/viewModel';
import type { TimelineBackend, TimelineChange } from './backend';

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
    if (change.kind === 'runs') this.runs = true;
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

/** Whether who holds the run changed since the view was sent (a heartbeat alone changes nothing). */
/** What the header shows besides the records: who holds the run, how many changes wait for review. */
function headerChanged(summary: RunSummary, sent: RunView, reviewCount: number): boolean {
  const elsewhere = summary.heldHere === false ? summary.holder?.pid : undefined;
  return (
    summary.leased !== sent.header.active || elsewhere !== sent.header.heldElsewhere?.pid || reviewCount !== (sent.header.reviewCount ?? 0)
  );
}

/**
 * Keeps what the webview was last sent, per run, and turns store changes into the smallest
 * messages: a snapshot on `ready`, then run deltas and patch live-state changes.
 */
export class TimelineSync {
  private readonly sent = new Map<string, RunView>();
  private readonly states = new Map<string, RunState>();
  private summaries = new Map<string, RunSummary>();

  constructor(private readonly backend: SyncBackend) {}

  /** The run's folded state, read once and kept until its records change. */
  async state(runId: string): Promise<RunState> {
    const cached = this.states.get(runId);
    if (cached) return cached;
    const state = await this.backend.readRun(runId);
    this.states.set(runId, state);
    return state;
  }

  async findPatch(runId: string, patchId: string): Promise<Patch | undefined> {
    return (await this.state(runId)).patches.find((p) => p.patchId === patchId);
  }

  private async refreshSummaries(): Promise<RunSummary[]> {
    const list = await this.backend.listRuns();
    // A damaged run stays listed: its intact part is shown read-only.
    this.summaries = new Map(list.map((s) => [s.runId, s]));
    return [...this.summaries.values()];
  }

  /** The run's state; undefined (and the run left out) when not even its run record reads. */
  private async readable(runId: string): Promise<RunState | undefined> {
    try {
      return await this.state(runId);
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      this.summaries.delete(runId);
      return undefined;
    }
  }

  private async view(runId: string): Promise<RunView | undefined> {
    const state = await this.readable(runId);
    if (!state) return undefined;
    const live = await this.backend.liveStates(runId);
    const summary = this.summaries.get(runId);
    const holder = summary?.heldHere === false ? summary.holder : undefined;
    const elsewhere = holder ? { pid: holder.pid, hostname: holder.hostname, heartbeatAt: holder.renewedAt } : undefined;
    const view = buildRunView(state, live, summary?.leased ?? false, elsewhere);
    const review = this.reviewCount(runId);
    return review > 0 ? { ...view, header: { ...view.header, reviewCount: review } } : view;
  }

  private reviewCount(runId: string): number {
    return this.backend.reviewCount?.(runId) ?? 0;
  }

  async snapshot(): Promise<SnapshotMessage> {
    this.sent.clear();
    const runs: RunView[] = [];
    for (const summary of await this.refreshSummaries()) {
      const view = await this.view(summary.runId);
      if (!view) continue;
      this.sent.set(summary.runId, view);
      runs.push(view);
    }
    return { type: 'snapshot', runs };
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
      for (const summary of list)
        if (!this.sent.has(summary.runId) || headerChanged(summary, this.sent.get(summary.runId)!, this.reviewCount(summary.runId)))
          touched.add(summary.runId);
    }
    for (const runId of touched) {
      this.states.delete(runId);
      if (!this.summaries.has(runId)) await this.refreshSummaries();
      if (!this.summaries.has(runId)) continue;
      const next = await this.view(runId);
      if (!next) {
        if (this.sent.has(runId)) messages.push({ type: 'runRemoved', runId });
        this.forget(runId);
        continue;
      }
      const delta = runDelta(this.sent.get(runId), next);
      this.sent.set(runId, next);
      if (delta) messages.push(delta);
    }
    if (batch.paths.length > 0) messages.push(...(await this.liveChanged(new Set(batch.paths), touched)));
    return messages;
  }

  /** While no webview listens: drop what the batch made stale, build nothing. */
  invalidate(batch: { runs: boolean; records: readonly string[] }): void {
    if (batch.runs) this.summaries.clear();
    for (const runId of batch.records) this.states.delete(runId);
  }

  private forget(runId: string): void {
    this.sent.delete(runId);
    this.states.delete(runId);
  }

  private async liveChanged(paths: ReadonlySet<string>, alreadyFresh: ReadonlySet<string>): Promise<HostToWebview[]> {
    const messages: HostToWebview[] = [];
    for (const [runId, view] of this.sent) {
      if (alreadyFresh.has(runId)) continue;
      const state = await this.state(runId);
      const affected = state.patches.filter((p) => p.state === 'pending' && paths.has(p.path));
      if (affected.length === 0) continue;
      const live = await this.backend.liveStates(runId);
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
