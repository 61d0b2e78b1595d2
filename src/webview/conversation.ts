import type { PendingApproval } from '../protocol/messages';
import type { RunView, StepRow } from '../protocol/viewModel';
import { approvalCard, restorePoint, stepDetail, streamingBody, type ApprovalActions, type DetailActions } from './detail';
import type { TimelineModel } from './model';
import { planPanel } from './plan';
import type { FlatRow } from './tree';

// Under the tree: the run as one conversation (the person's words, the model's in full as they
// stream, each call a line that expands, why it stopped with what helps), following the live
// end unless the person scrolled up; a step picked in the tree is scrolled into view. Its plan is
// pinned above it, outside the part that scrolls (nothing is drawn over the conversation). Beside
// it, the calls waiting for a decision.

/** The newest steps painted at first; "Show earlier steps" adds more. */
export const CONVERSATION_STEPS = 40;
/** Steps a run's first frame paints (its end, what the panel shows); the rest of the 40 follow a frame later. */
const FIRST_FRAME_STEPS = 8;

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

export class ConversationPanel {
  private focus: Focus | undefined;
  private queued = false;
  /** The run painted now, and each step's element with what it was painted from. */
  private runId: string | undefined;
  private readonly painted = new Map<number, { readonly key: string; readonly el: HTMLElement }>();
  /** The restore point before each step, built again only when whether it can be used changes. */
  private readonly points = new Map<number, { readonly key: string; readonly el: HTMLElement | undefined }>();
  /** The cards of the calls waiting for a decision, by call. */
  private readonly cards = new Map<string, HTMLElement>();
  /** A card new since the last paint: brought into view even when the person scrolled up. */
  private fresh: HTMLElement | undefined;
  /** Where the shown run's waiting calls sit, at the end of its conversation. */
  private readonly inlineBox = inlineApprovals();
  private shown = CONVERSATION_STEPS;
  /** A step the person picked, to scroll into view once it is painted. */
  private reveal: number | undefined;
  /** The pinned plan painted, with what it shows; and whether the person left it open. */
  private plan: { readonly key: string; readonly el: HTMLElement } | undefined;
  private planOpen = true;
  /** The text each painted streaming node shows. */
  private readonly streamText = new WeakMap<HTMLElement, string>();
  /** Streamed text was painted since the last frame began: more waits for the next frame. */
  private streamPainted = false;
  /** The person has not scrolled up from the conversation's end; and where it was last scrolled to. */
  private following = true;
  private scrolledTo = 0;

  /**
   * `box` holds the run's plan (painted here, first) and `detail`, the conversation that scrolls;
   * `approvals` the other runs' waiting calls.
   */
  constructor(
    readonly box: HTMLElement,
    readonly detail: HTMLElement,
    readonly approvals: HTMLElement,
    private readonly model: TimelineModel,
    private readonly actions: DetailActions & ApprovalActions,
  ) {
    // A narrower view, the plan opened, more rows in the tree: a conversation at its end (the
    // waiting call's card in view) stays there when its area shrinks. Only a scroll up leaves the
    // end: text wrapped anew since a scroll to the end does not.
    detail.addEventListener('scroll', () => {
      if (detail.scrollTop < this.scrolledTo || this.atEnd()) this.following = this.atEnd();
      this.scrolledTo = detail.scrollTop;
    });
    new ResizeObserver(() => {
      if (this.following) detail.scrollTop = detail.scrollHeight;
    }).observe(detail);
  }

  /** The run the panel is set to show (undefined: none picked). */
  shownRun(): string | undefined {
    return this.focus?.runId;
  }

  show(focus: Focus | undefined): void {
    this.focus = focus;
    this.reveal = focus?.stepId;
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

  /**
   * New streamed text: put into the painted node of the streamed step at once (that node alone,
   * not the run), at most once a frame; more text in the same frame, or text with no painted node
   * yet (a new step, another run shown), waits for the next frame's paint.
   */
  streamed(): void {
    if (this.queued || this.streamPainted || this.runId === undefined) return this.refresh();
    const stick = this.atEnd();
    if (!this.paintStream(this.runId)) return this.refresh();
    this.streamPainted = true;
    requestAnimationFrame(() => (this.streamPainted = false));
    if (stick) this.detail.scrollTop = this.detail.scrollHeight;
  }

  /** Brings the streamed text of the shown run into its painted node; false when no node shows that step. */
  private paintStream(runId: string): boolean {
    const stepId = this.model.streamingStep(runId);
    const text = this.model.streaming(runId);
    if (stepId === undefined || text === undefined) return true;
    const node = this.detail.querySelector<HTMLElement>(`.markdown.streaming[data-stream-step="${stepId}"]`);
    if (!node) return false;
    if (this.streamText.get(node) !== text) node.replaceWith(this.markStream(streamingBody(text, this.actions), stepId, text));
    return true;
  }

  /** Notes that `node` shows `text` streamed into step `stepId`. */
  private markStream(node: HTMLElement, stepId: number, text: string): HTMLElement {
    node.dataset.streamStep = String(stepId);
    this.streamText.set(node, text);
    return node;
  }

  /** The conversation is scrolled to its end (it follows new text). */
  private atEnd(): boolean {
    return this.detail.scrollTop >= this.detail.scrollHeight - this.detail.clientHeight - 4;
  }

  private paint(): void {
    const run = (this.focus && this.model.get(this.focus.runId)) ?? this.model.list()[0];
    const pending = new Set(this.model.approvals.map((a) => a.callId));
    for (const callId of this.cards.keys()) if (!pending.has(callId)) this.cards.delete(callId);
    // The shown run's waiting calls sit at the end of its conversation; other runs' below it.
    const inline = this.model.approvals.filter((a) => a.runId === run?.header.runId);
    const others = this.model.approvals.filter((a) => a.runId !== run?.header.runId);
    if (!run) this.box.hidden = true;
    else
      this.paintRun(
        run,
        inline.map((a) => this.card(a)),
      );
    replaceIfChanged(
      this.approvals,
      others.map((a) => this.card(a)),
    );
    this.approvals.hidden = others.length === 0;
  }

  /** A waiting call's card, kept while it waits (a reason being typed survives repaints). */
  private card(approval: PendingApproval): HTMLElement {
    const cached = this.cards.get(approval.callId);
    if (cached) return cached;
    const card = approvalCard(approval, this.actions);
    this.cards.set(approval.callId, card);
    this.fresh = card;
    return card;
  }

  private paintRun(run: RunView, waiting: readonly HTMLElement[]): void {
    const runId = run.header.runId;
    if (runId !== this.runId) {
      this.runId = runId;
      this.painted.clear();
      this.points.clear();
      this.shown = FIRST_FRAME_STEPS;
    }
    const stick = this.atEnd();
    this.box.hidden = false;
    const plan = this.planOf(run);
    replaceIfChanged(this.box, plan ? [plan, this.detail] : [this.detail]);
    const streamingId = this.model.streamingStep(runId);
    const steps = visibleSteps(run, this.shown, this.reveal);
    const children: HTMLElement[] = [];
    if (steps.length < run.steps.length) children.push(this.earlierButton(run.steps.length - steps.length));
    for (const step of steps) {
      const point = this.restorePointOf(run, step);
      if (point) children.push(point);
      children.push(this.stepElement(run, step.stepId, step));
    }
    if (run.steps.length === 0 || (streamingId !== undefined && !run.steps.some((s) => s.stepId === streamingId)))
      children.push(this.stepElement(run, streamingId ?? -1, undefined));
    if (waiting.length > 0) {
      replaceIfChanged(this.inlineBox, waiting);
      children.push(this.inlineBox);
    }
    replaceIfChanged(this.detail, children);
    this.paintStream(runId);
    const target = this.reveal !== undefined ? this.painted.get(this.reveal)?.el : undefined;
    if (target) {
      target.scrollIntoView({ block: 'start' });
      this.reveal = undefined;
      // Now, not at the scroll event a frame later: a resize this frame must not undo the reveal.
      // (Nothing else here: a paint in the frame of a resize sees the end moved away, not left.)
      this.following = this.atEnd();
    } else if (stick) this.detail.scrollTop = this.detail.scrollHeight;
    if (this.fresh && waiting.includes(this.fresh)) this.fresh.scrollIntoView({ block: 'nearest' });
    this.fresh = undefined;
    if (this.shown < CONVERSATION_STEPS) {
      this.shown = CONVERSATION_STEPS;
      this.refresh();
    }
  }

  /**
   * A step's element (`step` undefined: the one the model starts before its step is recorded),
   * built again only when what it shows changed; streamed text is brought in by `paintStream`.
   */
  private stepElement(run: RunView, stepId: number, step: StepRow | undefined): HTMLElement {
    const latest = step === undefined || run.steps.at(-1)?.stepId === step.stepId;
    const h = run.header;
    const streaming = this.model.streaming(run.header.runId, stepId);
    const key = [
      step ? JSON.stringify(step) : 'starting',
      streaming === undefined ? 0 : 1,
      latest ? `${h.status}|${h.active}|${h.statusReason ?? ''}|${JSON.stringify(h.failure ?? null)}|${h.heldElsewhere ? 1 : 0}` : '',
    ].join('|');
    const cached = this.painted.get(stepId);
    if (cached?.key === key) return cached.el;
    const el = stepDetail(run, step, streaming, this.actions);
    el.dataset.stepId = String(stepId);
    const node = el.querySelector<HTMLElement>('.markdown.streaming');
    if (node && streaming !== undefined) this.markStream(node, stepId, streaming);
    this.painted.set(stepId, { key, el });
    return el;
  }

  /** The run's plan, pinned above its conversation; built again only when it changed. */
  private planOf(run: RunView): HTMLElement | undefined {
    const steps = run.header.plan;
    if (steps === undefined || steps.length === 0) return (this.plan = undefined);
    const stopped = run.header.status !== 'running';
    const key = JSON.stringify([steps, stopped]);
    if (this.plan?.key !== key) this.plan = { key, el: planPanel(steps, stopped, this.planOpen, (open) => (this.planOpen = open)) };
    return this.plan.el;
  }

  private restorePointOf(run: RunView, step: StepRow): HTMLElement | undefined {
    const h = run.header;
    const key = `${step.checkpointId}|${step.restorePoint ?? ''}|${h.status}|${h.active}|${h.damaged ?? ''}`;
    const cached = this.points.get(step.stepId);
    if (cached?.key === key) return cached.el;
    const el = restorePoint(run, step, this.actions);
    this.points.set(step.stepId, { key, el });
    return el;
  }

  private earlierButton(hidden: number): HTMLElement {
    const more = document.createElement('button');
    more.className = 'link-button earlier';
    more.textContent = `Show ${Math.min(hidden, CONVERSATION_STEPS)} earlier steps (${hidden} not shown)`;
    more.addEventListener('click', () => {
      this.shown += CONVERSATION_STEPS;
      this.refresh();
    });
    return more;
  }
}

function inlineApprovals(): HTMLElement {
  const box = document.createElement('div');
  box.className = 'approvals inline';
  box.setAttribute('role', 'region');
  box.setAttribute('aria-label', 'Tool calls of this run waiting for your decision');
  return box;
}

/** The newest `shown` steps, reaching back to a step the person picked. */
export function visibleSteps(run: RunView, shown: number, reveal: number | undefined): readonly StepRow[] {
  let from = Math.max(0, run.steps.length - shown);
  if (reveal !== undefined) {
    const at = run.steps.findIndex((s) => s.stepId === reveal);
    if (at >= 0 && at < from) from = at;
  }
  return run.steps.slice(from);
}

/**
 * Puts `children` in `parent` in order, touching only what differs: an element no longer shown
 * leaves, a new one goes in its place, the others stay (their layout is kept).
 */
function replaceIfChanged(parent: HTMLElement, children: readonly HTMLElement[]): void {
  const keep = new Set(children);
  for (const old of Array.from(parent.children)) if (!keep.has(old as HTMLElement)) old.remove();
  children.forEach((child, i) => {
    if (parent.children[i] !== child) parent.insertBefore(child, parent.children[i] ?? null);
  });
}
