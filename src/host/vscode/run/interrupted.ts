import * as vscode from 'vscode';
import { isInterrupted } from './agent-controller';
import { COMMANDS, resumeRun } from './run-commands';
import type { Services } from '../window/services';
import { finderOf, runTitle } from '../../../words/run-title';
import { counted } from '../../../words/words';

export const OFFER_RESUME = 'Resume';
export const OFFER_SHOW = 'Show in Timeline';
export const OFFER_DISMISS = 'Dismiss';
const DISMISSED_KEY = 'agentCheckpoints.dismissedInterruptedRuns';
/** More than this many interrupted runs are offered through "Agent: Resume" instead of one notification each. */
const MAX_OFFERS = 3;

export interface OfferResult {
  readonly runId: string;
  readonly choice: 'resume' | 'show' | 'dismiss' | 'ignored';
  /** Set when the choice was Resume and the run started again. */
  readonly resumed?: boolean;
}

/**
 * Offers each run left interrupted (no end, writer gone) once per window: Resume, Show in
 * Timeline, or Dismiss (not offered again; "Agent: Resume" still lists it).
 */
export async function offerInterruptedRuns(s: Services): Promise<OfferResult[]> {
  await s.storeReady;
  const dismissed = new Set(s.context.workspaceState.get<string[]>(DISMISSED_KEY, []));
  const listed = await s.store.listRuns();
  const find = finderOf(listed);
  const runs = listed
    .filter((r) => isInterrupted(r) && !dismissed.has(r.runId) && !s.controller.isRunning(r.runId))
    .sort((a, b) => b.updatedAt - a.updatedAt);
  if (runs.length > 0) s.log.log('info', `${counted(runs.length, 'interrupted run')}: ${runs.map((r) => r.runId).join(', ')}`);
  return Promise.all(
    runs.slice(0, MAX_OFFERS).map(async (run): Promise<OfferResult> => {
      const choice = await s.prompts.message(
        'warning',
        `Agent run "${runTitle(run, find)}" was interrupted at step ${run.steps} (no end recorded, its writer is gone). Resume it?`,
        {},
        OFFER_RESUME,
        OFFER_SHOW,
        OFFER_DISMISS,
      );
      if (choice === OFFER_RESUME)
        return { runId: run.runId, choice: 'resume', resumed: (await resumeRun(s, { runId: run.runId })) !== undefined };
      if (choice === OFFER_SHOW) {
        await vscode.commands.executeCommand(COMMANDS.showTimeline);
        return { runId: run.runId, choice: 'show' };
      }
      if (choice === OFFER_DISMISS) {
        dismissed.add(run.runId);
        await s.context.workspaceState.update(DISMISSED_KEY, [...dismissed]);
        return { runId: run.runId, choice: 'dismiss' };
      }
      return { runId: run.runId, choice: 'ignored' };
    }),
  );
}
