import * as vscode from 'vscode';
import type { ApprovalDecision, ApprovalRequest, Approver, DenialWithReason, UncertainChoice, UncertainRequest } from '../../../core/ports';
import type { PendingApproval } from '../../../protocol/messages';
import type { Prompts } from '../window/prompts';

export const ALLOW_ONCE = 'Allow once';
export const ALLOW_FOR_RUN = 'Allow for this run';
export const DENY = 'Deny';
export const RUN_AGAIN = 'Run again';
export const MARK_DONE = 'Mark as done';
export const REPORT_UNKNOWN = 'Report unknown';

const DECISIONS: Record<string, ApprovalDecision> = { [ALLOW_ONCE]: 'allow_once', [ALLOW_FOR_RUN]: 'allow_for_run', [DENY]: 'deny' };
const CHOICES: Record<string, UncertainChoice> = { [RUN_AGAIN]: 'run_again', [MARK_DONE]: 'mark_done', [REPORT_UNKNOWN]: 'report_unknown' };

class AbortedError extends Error {
  constructor() {
    super('cancelled while waiting for an answer');
    this.name = 'AbortError';
  }
}

/** The answer, or a rejection as soon as the run is cancelled (the dialog may stay up; its answer is ignored). */
function untilAborted<T>(answer: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return answer;
  if (signal.aborted) return Promise.reject(new AbortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

function inputPreview(input: unknown): string {
  const text = JSON.stringify(input, null, 2) ?? '';
  return text.length > 600 ? `${text.slice(0, 600)}\n...` : text;
}

/** The Approver port as modal dialogs. Dismissing an approval denies it; dismissing an uncertain call reports it unknown. */
export class DialogApprover implements Approver {
  constructor(private readonly prompts: Prompts) {}

  async approve(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const why = request.reason !== undefined ? `${request.reason}.\n\n` : '';
    // A protected write is allowed once at most: no "for this run" choice.
    const choices = request.reason !== undefined ? [ALLOW_ONCE, DENY] : [ALLOW_ONCE, ALLOW_FOR_RUN, DENY];
    const answer = await untilAborted(
      this.prompts.message(
        'warning',
        `The agent wants to ${request.summary}`,
        {
          modal: true,
          detail: `${why}Tool ${request.toolName}, call ${request.callId}\n\n${inputPreview(request.input)}\n\nYour decision is recorded in the run.`,
        },
        ...choices,
      ),
      signal,
    );
    return (answer !== undefined ? DECISIONS[answer] : undefined) ?? 'deny';
  }

  async askUncertain(request: UncertainRequest, signal?: AbortSignal): Promise<UncertainChoice | null> {
    const answer = await untilAborted(
      this.prompts.message(
        'warning',
        `The run stopped while "${request.summary}" was running: it may or may not have taken effect.`,
        {
          modal: true,
          detail: `Tool ${request.toolName}, call ${request.callId}. It is not safe to repeat automatically.\n\nReport unknown: tell the agent its outcome is unknown.\nMark as done: tell the agent it completed.\nRun again: execute it once more.`,
        },
        // The safest answer first: it is the one Enter picks.
        REPORT_UNKNOWN,
        MARK_DONE,
        RUN_AGAIN,
      ),
      signal,
    );
    return (answer !== undefined ? CHOICES[answer] : undefined) ?? 'report_unknown';
  }
}

/** Where approvals show besides a notification: the Timeline, when it is on screen. */
export interface ApprovalSurface {
  visible(): boolean;
  reveal(): void;
  /** It came into view or went out of it (a call that waits while it is hidden gets a notification). */
  readonly onDidChangeVisibility?: vscode.Event<void>;
  /** The count on the view's icon (tests). */
  badge?(): { readonly value: number } | undefined;
}

type Answer = ApprovalDecision | DenialWithReason;

interface Waiting {
  readonly pending: PendingApproval;
  readonly request: ApprovalRequest;
  /** A notification with its choices was shown for it. */
  notified: boolean;
  settle(answer: Answer): void;
}

/**
 * The Approver port in the Timeline: a waiting call shows there with Allow once / Allow for this
 * run / Deny (with a reason). While the Timeline is hidden (or the prompts are scripted, as in
 * host tests) a notification with the same choices is shown instead of taking the side bar from
 * what the person has open (the badge on the view's icon and the status bar say it too); a call
 * still waiting when the Timeline goes out of view gets its notification then. The first answer
 * counts. Uncertain calls after a crash are still asked in a modal dialog.
 */
export class InlineApprover implements Approver, vscode.Disposable {
  private readonly waiting = new Map<string, Waiting>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly dialogs: DialogApprover;
  private shownOn: ApprovalSurface | undefined;
  private visibility: vscode.Disposable | undefined;

  constructor(private readonly prompts: Prompts & { readonly replaced?: boolean }) {
    this.dialogs = new DialogApprover(prompts);
  }

  get surface(): ApprovalSurface | undefined {
    return this.shownOn;
  }

  set surface(surface: ApprovalSurface | undefined) {
    this.shownOn = surface;
    this.visibility?.dispose();
    this.visibility = surface?.onDidChangeVisibility?.(() => {
      if (surface.visible()) return;
      for (const waiting of this.waiting.values()) if (!waiting.notified) this.notify(waiting);
    });
  }

  pending(): PendingApproval[] {
    return [...this.waiting.values()].map((w) => w.pending);
  }

  /** Settles a waiting call from the Timeline; false when it no longer waits. */
  decide(runId: string, callId: string, decision: ApprovalDecision, reason?: string): boolean {
    const waiting = this.waiting.get(callId);
    if (!waiting || waiting.pending.runId !== runId) return false;
    if (decision === 'deny' && reason !== undefined && reason.trim() !== '') waiting.settle({ decision: 'deny', reason: reason.trim() });
    else if (decision === 'allow_for_run' && waiting.pending.reason !== undefined) waiting.settle('allow_once');
    else waiting.settle(decision);
    return true;
  }

  approve(request: ApprovalRequest, signal?: AbortSignal): Promise<Answer> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    const hidden = !(this.surface?.visible() ?? false);
    return new Promise<Answer>((resolve, reject) => {
      const done = () => {
        this.waiting.delete(request.callId);
        signal?.removeEventListener('abort', onAbort);
        this.changed.fire();
      };
      const onAbort = () => {
        done();
        reject(new AbortedError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const waiting: Waiting = {
        pending: pendingOf(request),
        request,
        notified: false,
        settle: (answer) => {
          if (!this.waiting.has(request.callId)) return;
          done();
          resolve(answer);
        },
      };
      this.waiting.set(request.callId, waiting);
      this.changed.fire();
      if (hidden || this.prompts.replaced === true) this.notify(waiting);
    });
  }

  private notify(waiting: Waiting): void {
    waiting.notified = true;
    const request = waiting.request;
    const choices = request.reason !== undefined ? [ALLOW_ONCE, DENY] : [ALLOW_ONCE, ALLOW_FOR_RUN, DENY];
    const why = request.reason !== undefined ? `${request.reason}.\n\n` : '';
    void this.prompts
      .message(
        'warning',
        `The agent wants to ${request.summary}`,
        {
          detail: `${why}Tool ${request.toolName}, call ${request.callId}\n\n${inputPreview(request.input)}\n\nYour decision is recorded in the run.`,
        },
        ...choices,
      )
      .then((answer) => {
        const decision = answer !== undefined ? DECISIONS[answer] : undefined;
        // A dismissed notification leaves the call waiting in the Timeline.
        if (decision !== undefined) this.decide(request.runId, request.callId, decision);
      });
  }

  askUncertain(request: UncertainRequest, signal?: AbortSignal): Promise<UncertainChoice | null> {
    return this.dialogs.askUncertain(request, signal);
  }

  dispose(): void {
    this.visibility?.dispose();
    this.changed.dispose();
  }
}

function pendingOf(request: ApprovalRequest): PendingApproval {
  return {
    runId: request.runId,
    callId: request.callId,
    toolName: request.toolName,
    summary: request.summary,
    input: inputPreview(request.input),
    ...(request.reason !== undefined ? { reason: request.reason } : {}),
  };
}
