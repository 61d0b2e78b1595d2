import type { RunView, StepRow } from '../protocol/viewModel';
import { approvalCard, stepDetail, type ApprovalActions, type DetailActions } from './detail';
import type { TimelineModel } from './model';
import type { FlatRow } from './tree';

// Under the tree: the open step in full (the selected one, or the latest step of the run
// being followed, with the model's text streaming in) and the calls waiting for a decision.

/** What the panel shows: a run, and a step of it or (undefined) its latest one. */
export interface Focus {
  readonly runId: string;
  readonly stepId?: number;
}

/** The focus a selected row gives: its step, or the run's latest step for a run row. */
export function focusOf(row: FlatRow | undefined): Focus | undefined {
  if (!row) return undefined;
  return row.step ? { runId: row.run.runId, stepId: row.step.stepId } : { runId: row.run.runId };
}

/** The step the panel shows for a focus: a fixed step, or the one being written now, or the last. */
export function focusedStep(model: TimelineModel, run: RunView, focus: Focus | undefined): { step?: StepRow; streaming?: string } {
  const stepId = focus?.stepId ?? model.streamingStep(run.header.runId) ?? run.steps.at(-1)?.stepId;
  if (stepId === undefined) return {};
  const step = run.steps.find((s) => s.stepId === stepId);
  const streaming = model.streaming(run.header.runId, stepId);
  return { ...(step ? { step } : {}), ...(streaming !== undefined ? { streaming } : {}) };
}

export class ConversationPanel {
  private focus: Focus | undefined;
  private queued = false;
  /** When the last stream text was painted (for the bench). */
  lastStreamPaint = 0;

  constructor(
    readonly detail: HTMLElement,
    readonly approvals: HTMLElement,
    private readonly model: TimelineModel,
    private readonly actions: DetailActions & ApprovalActions,
  ) {}

  show(focus: Focus | undefined): void {
    this.focus = focus;
    this.refresh();
  }

  /** Repaints at the next frame (many stream deltas share one paint). */
  refresh(): void {
    if (this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => {
      this.queued = false;
      this.paint();
    });
  }

  private paint(): void {
    const run = (this.focus && this.model.get(this.focus.runId)) ?? this.model.list()[0];
    if (!run) {
      this.detail.hidden = true;
    } else {
      const focus = this.focus?.runId === run.header.runId ? this.focus : undefined;
      const { step, streaming } = focusedStep(this.model, run, focus);
      const stick = this.detail.scrollTop >= this.detail.scrollHeight - this.detail.clientHeight - 4;
      this.detail.hidden = false;
      this.detail.replaceChildren(stepDetail(run, step, streaming, this.actions));
      if (streaming !== undefined && stick) this.detail.scrollTop = this.detail.scrollHeight;
      if (streaming !== undefined) this.lastStreamPaint = performance.now();
    }
    this.approvals.replaceChildren(...this.model.approvals.map((a) => approvalCard(a, this.actions)));
    this.approvals.hidden = this.model.approvals.length === 0;
  }
}
