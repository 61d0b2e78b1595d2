import * as vscode from 'vscode';
import type { RunOutcome } from '../../../core/runtime';
import { CANCELLED_REASON } from '../../../core/runtime';
import { describeFailure, FAILURE_ACTION_LABELS, type FailureAction } from '../../../words/failure-words';
import type { ActiveRun } from './agent-controller';
import { COMMANDS, resumeRun } from './run-commands';
import { askRaise, LIMIT_LEFT, raiseDepsOf } from './raise-limit';
import type { Services } from '../window/services';
import { errorText } from '../../../core/error-text';

// How a run ended, told to the person with the action beside it: the failure's words come from
// protocol (failure-words.ts), the same as the Timeline and the CLI say them; the buttons run here.

const SHOW_LOG = 'Show Log';
const SHOW_TIMELINE = 'Show in Timeline';

/** Runs the action beside a run's failure; says in a sentence what happened. */
export async function runFailureAction(s: Services, runId: string, action: FailureAction): Promise<string> {
  switch (action) {
    case 'set_key':
      await vscode.commands.executeCommand(COMMANDS.setApiKey);
      return 'With the key set, Retry goes on with the run.';
    case 'show_log':
      s.channel.show(true);
      return 'The log is open.';
    case 'retry':
    case 'resume':
      return (await resumeRun(s, { runId })) ? 'Run resumed.' : 'Not resumed.';
    case 'raise_limit': {
      const limit = (await s.store.readResumeState(runId)).failure?.limit;
      if (!limit) return (await resumeRun(s, { runId })) ? 'Run resumed.' : 'Not resumed.';
      const raise = await askRaise(raiseDepsOf(s), limit);
      if (!raise) return LIMIT_LEFT;
      return (await resumeRun(s, { runId, options: { raise } })) ? 'Run resumed with the higher limit.' : 'Not resumed.';
    }
  }
}

/** A paused run: its failure in words with its actions, or a plain "paused" for a cancel. */
function announcePause(s: Services, outcome: RunOutcome): void {
  if (!outcome.failure) {
    const why = outcome.reason === CANCELLED_REASON ? 'cancelled' : (outcome.reason ?? 'paused');
    const resume = FAILURE_ACTION_LABELS.resume;
    void s.prompts.message('info', `Agent run paused (${why}). Nothing is lost: resume it any time.`, {}, resume).then((c) => {
      if (c === resume) void resumeRun(s, { runId: outcome.runId });
    });
    return;
  }
  const words = describeFailure(outcome.failure);
  const labels = words.actions.map((a) => FAILURE_ACTION_LABELS[a]);
  const text = `Agent run paused. ${words.title}${words.detail !== undefined ? ` — ${words.detail}` : ''}`;
  const level = outcome.failure.kind === 'limit' || outcome.failure.kind === 'interrupted' ? 'warning' : 'error';
  void s.prompts.message(level, text, {}, ...labels).then((choice) => {
    const action = words.actions[labels.indexOf(choice ?? '')];
    if (action) void runFailureAction(s, outcome.runId, action);
  });
}

/** Tells the person how a run ended, with the next step as an action. */
export function announceOutcome(s: Services, run: ActiveRun, outcome: RunOutcome | undefined, error: unknown): void {
  void s.keys.refresh();
  if (!outcome) {
    const text = errorText(error);
    void s.prompts
      .message('error', `Agent run ${run.runId} stopped with an error: ${text}`, {}, SHOW_LOG)
      .then((c) => c === SHOW_LOG && s.channel.show(true));
    return;
  }
  if (outcome.status === 'completed') {
    void s.prompts
      .message('info', `Agent run completed${outcome.reason ? `: ${outcome.reason.slice(0, 200)}` : '.'}`, {}, SHOW_TIMELINE)
      .then((c) => c === SHOW_TIMELINE && vscode.commands.executeCommand(COMMANDS.showTimeline));
    return;
  }
  if (outcome.status === 'paused') return announcePause(s, outcome);
  void s.prompts
    .message('error', `Agent run ${outcome.status}${outcome.reason ? `: ${outcome.reason}` : ''}`, {}, SHOW_LOG)
    .then((c) => c === SHOW_LOG && s.channel.show(true));
}
