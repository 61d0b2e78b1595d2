import type { PatchLiveMessage, PendingApproval, RunDeltaMessage, StreamMessage } from '../protocol/messages';
import type { RunView } from '../protocol/viewModel';
import { applyRunDelta } from '../protocol/messages';

/** The runs the webview holds, newest first, updated by host messages. */
export class TimelineModel {
  private runs: RunView[] = [];
  /** Text the model is writing now, per run, until its step's answer is recorded. */
  private readonly streams = new Map<string, { stepId: number; text: string }>();
  /** Calls waiting for the person's decision. */
  approvals: readonly PendingApproval[] = [];

  /** The text streaming into a step right now, if any. */
  streaming(runId: string, stepId?: number): string | undefined {
    const stream = this.streams.get(runId);
    if (!stream || (stepId !== undefined && stream.stepId !== stepId)) return undefined;
    return stream.text;
  }

  /** The step being streamed into, when one is. */
  streamingStep(runId: string): number | undefined {
    return this.streams.get(runId)?.stepId;
  }

  appendStream(message: StreamMessage): void {
    const stream = this.streams.get(message.runId);
    if (stream && stream.stepId === message.stepId) stream.text += message.text;
    else this.streams.set(message.runId, { stepId: message.stepId, text: message.text });
  }

  /** Drops a stream whose step now has its recorded answer, or whose run stopped. */
  private settleStream(run: RunView): void {
    const stream = this.streams.get(run.header.runId);
    if (!stream) return;
    const step = run.steps.find((s) => s.stepId === stream.stepId);
    const answered = step !== undefined && (step.text !== undefined || step.calls.length > 0);
    const later = run.steps.some((s) => s.stepId > stream.stepId);
    if (answered || later || run.header.status !== 'running') this.streams.delete(run.header.runId);
  }

  list(): readonly RunView[] {
    return this.runs;
  }

  get(runId: string): RunView | undefined {
    return this.runs.find((r) => r.header.runId === runId);
  }

  replaceAll(runs: readonly RunView[]): void {
    this.runs = [...runs];
    this.sort();
    for (const run of this.runs) this.settleStream(run);
  }

  /** Runs of the opening after the snapshot's: each added (or replacing the one held), sorted once. */
  addListed(runs: readonly RunView[]): void {
    const listed = new Set(runs.map((r) => r.header.runId));
    this.runs = [...this.runs.filter((r) => !listed.has(r.header.runId)), ...runs];
    this.sort();
    for (const run of runs) this.settleStream(run);
  }

  applyDelta(delta: RunDeltaMessage): void {
    const index = this.runs.findIndex((r) => r.header.runId === delta.header.runId);
    const next = applyRunDelta(index >= 0 ? this.runs[index] : undefined, delta);
    if (index >= 0) this.runs[index] = next;
    else {
      this.runs.push(next);
      this.sort();
    }
    this.settleStream(next);
  }

  remove(runId: string): boolean {
    const before = this.runs.length;
    this.runs = this.runs.filter((r) => r.header.runId !== runId);
    return this.runs.length !== before;
  }

  /** Sets the live state of patches; returns how many rows changed. */
  applyPatchLive(message: PatchLiveMessage): number {
    const run = this.get(message.runId);
    if (!run) return 0;
    const wanted = new Map(message.changes.map((c) => [c.patchId, c.state]));
    let changed = 0;
    for (const step of run.steps) {
      for (const call of step.calls) {
        call.patches = call.patches.map((patch) => {
          const state = wanted.get(patch.patchId);
          if (state === undefined || state === patch.state) return patch;
          changed++;
          return { ...patch, state };
        });
      }
    }
    return changed;
  }

  /** Newest first, each run's forks right after it (newest first too): the run list is a tree of runs. */
  private sort(): void {
    const newest = [...this.runs].sort((a, b) => b.header.createdAt - a.header.createdAt);
    const present = new Set(newest.map((r) => r.header.runId));
    const forksOf = new Map<string, typeof newest>();
    for (const run of newest) {
      const parent = run.header.parent?.runId;
      if (parent !== undefined && present.has(parent)) forksOf.set(parent, [...(forksOf.get(parent) ?? []), run]);
    }
    const ordered: typeof newest = [];
    const seen = new Set<string>();
    const visit = (run: (typeof newest)[number]): void => {
      if (seen.has(run.header.runId)) return;
      seen.add(run.header.runId);
      ordered.push(run);
      for (const fork of forksOf.get(run.header.runId) ?? []) visit(fork);
    };
    for (const run of newest) if (run.header.parent === undefined || !present.has(run.header.parent.runId)) visit(run);
    for (const run of newest) visit(run);
    this.runs.splice(0, this.runs.length, ...ordered);
  }
}
