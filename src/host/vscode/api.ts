import type { RunOutcome } from '../../core/runtime';
import { offerInterruptedRuns, type OfferResult } from './run/interrupted';
import type { Prompts } from './window/prompts';
import type { ReviewRegistration } from './review';
import type { Services } from './window/services';
import type { TimelineBackend } from './timeline/backend';

/**
 * What the extension exports: a small surface for host tests (and other extensions). Nothing here
 * lowers safety: no trust override, no policy or key access (Restricted Mode is tested with the
 * restricted launcher, `npm run test:host -- --restricted`).
 */
export interface AgentCheckpointsApi {
  whenTimelineResolved(): Promise<void>;
  /** The checkpoint store's root folder (the workspace storage). */
  readonly storagePath: string;
  /** The extension's log folder (the "Agent Checkpoints" channel is written under it). */
  readonly logPath: string;
  runningRunId(): string | undefined;
  /** The outcome of the run in progress, or undefined at once when none runs. */
  whenIdle(): Promise<RunOutcome | undefined>;
  /** Replaces every dialog, input box and quick pick (tests); undefined restores VS Code's. */
  usePrompts(prompts: Prompts | undefined): void;
  /** The offer made on activation: interrupted runs with Resume / Show in Timeline / Dismiss. */
  offerInterruptedRuns(): Promise<OfferResult[]>;
  /** Recent log lines as written to the channel (redacted). */
  logText(): string;
  refreshContextKeys(): Promise<void>;
  statusText(): string;
  /** The count on the Timeline view's icon (calls waiting for a decision), when one shows. */
  approvalBadge(): number | undefined;
  /** A new instruction for a stopped run (what the Timeline's Continue does); settles with its outcome. */
  continueRun(runId: string, instruction: string): Promise<RunOutcome | undefined>;
  /** The backend the Timeline view is built on. */
  readonly timelineBackend: TimelineBackend;
  /** Journal reads this window made so far (whole, or from a snapshot): tests count them. */
  journalReads(): number;
  /** Settles once the run model has read the lease changes it was told of (and told who holds what). */
  modelSettled(): Promise<void>;
  /** The inline review: its count, its marks, a reload from disk. */
  readonly review: Pick<ReviewRegistration, 'count' | 'reload' | 'settled' | 'marksOf'>;
}

export function createApi(
  s: Services,
  timelineBackend: TimelineBackend,
  whenTimelineResolved: () => Promise<void>,
  review: AgentCheckpointsApi['review'],
): AgentCheckpointsApi {
  return {
    timelineBackend,
    review,
    whenTimelineResolved,
    storagePath: s.storagePath,
    logPath: s.context.logUri.fsPath,
    runningRunId: () => s.controller.current?.runId,
    whenIdle: async () => s.controller.current?.done,
    continueRun: async (runId, instruction) => (await s.controller.continueRun(runId, instruction)).run.done,
    usePrompts: (prompts) => s.prompts.use(prompts),
    offerInterruptedRuns: () => offerInterruptedRuns(s),
    logText: () => s.logTail.join('\n'),
    refreshContextKeys: () => s.keys.refresh(),
    statusText: () => s.presenter.statusText,
    approvalBadge: () => s.approvals.surface?.badge?.()?.value,
    journalReads: () => s.model.journalReads,
    modelSettled: () => s.model.settled(),
  };
}
