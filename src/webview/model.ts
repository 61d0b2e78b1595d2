import type { PatchLiveMessage, RunDeltaMessage } from '../protocol/messages';
import type { RunView } from '../protocol/viewModel';
import { applyRunDelta } from '../protocol/build';

/** The runs the webview holds, newest first, updated by host messages. */
export class TimelineModel {
  private runs: RunView[] = [];

  list(): readonly RunView[] {
    return this.runs;
  }

  get(runId: string): RunView | undefined {
    return this.runs.find((r) => r.header.runId === runId);
  }

  replaceAll(runs: readonly RunView[]): void {
    this.runs = [...runs];
    this.sort();
  }

  applyDelta(delta: RunDeltaMessage): void {
    const index = this.runs.findIndex((r) => r.header.runId === delta.header.runId);
    const next = applyRunDelta(index >= 0 ? this.runs[index] : undefined, delta);
    if (index >= 0) this.runs[index] = next;
    else {
      this.runs.push(next);
      this.sort();
    }
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

  private sort(): void {
    this.runs.sort((a, b) => b.header.createdAt - a.header.createdAt);
  }
}
