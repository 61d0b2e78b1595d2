import { isEmptyAnswer, toolUsesOf, type ContentBlock, type MessageParam, type ToolResultBlock } from '../model/messages';
import { ModelError } from '../model/provider';
import type { NewRecord, RunFailure } from '../store/records';
import { StorageFailure } from './errors';
import { failureOf, HostClosing } from './failure';
import { limitHit, withTurnStarted, withUsage } from './budget';
import { compactIfNeeded } from './compaction';
import { buildRequest, thinkingDropNote, usageRecord } from './request';
import { checkCancelled, PauseSignal, plannedEntry, type CallEnv } from './calls';
import { reconcileCalls, type CallReport } from './reconcile';
import { normaliseMessage, type RunSession } from './session';
import { CANCELLED_REASON, type RunOutcome } from './types';
import { errorText } from '../error-text';

export const CONTINUE_AFTER_MAX_TOKENS = 'Your previous answer was cut off at the output token limit. Continue exactly where it stopped.';
export const CONTINUE_AFTER_WINDOW =
  "Your previous answer was cut off: it filled the model's context window. Continue exactly where it stopped.";

/**
 * Whether an answer was cut: at max_tokens, or because it filled the context window
 * (`model_context_window_exceeded`, which "Handling stop reasons" says to treat as truncated).
 */
export function isCutAnswer(stopReason: string | undefined): boolean {
  return stopReason === 'max_tokens' || stopReason === 'model_context_window_exceeded';
}
/**
 * The user turn sent, once, after an empty answer: a message of its own (Anthropic's "Handling
 * stop reasons": a new user message asking to go on, never text added after tool results).
 */
export const CONTINUE_AFTER_EMPTY = 'Please continue.';
/** Why a run stops when the model answered nothing, twice in a row. */
export const NO_ANSWER_REASON = 'the model gave no answer (an empty reply, again after it was asked to continue)';

/** Builds the recovery note once reconciliation knows what happened to each call. */
export type NoteBuilder = (reports: readonly CallReport[]) => string;

/** Runs `body`, turning every way a run can stop early into a paused (or interrupted) outcome. */
export async function runGuarded(session: RunSession, signal: AbortSignal, body: () => Promise<RunOutcome>): Promise<RunOutcome> {
  try {
    return await body();
  } catch (error) {
    return pause(session, stopOf(error, signal), !(error instanceof StorageFailure && error.leaseLost));
  }
}

/** Why a run stopped: the reason in words (kept as before), and its failure kind when it is one. */
export interface Stop {
  readonly reason: string;
  readonly failure?: RunFailure;
  /** A window that closed interrupts its run; everything else pauses it. */
  readonly status?: 'paused' | 'interrupted';
}

function stopOf(error: unknown, signal: AbortSignal): Stop {
  if (signal.aborted && signal.reason instanceof HostClosing) {
    const message = signal.reason.message;
    return { reason: `interrupted: ${message}`, failure: { kind: 'interrupted', message }, status: 'interrupted' };
  }
  if (error instanceof PauseSignal) return { reason: error.reason, ...(error.failure ? { failure: error.failure } : {}) };
  if (signal.aborted || (error instanceof ModelError && error.kind === 'aborted')) return { reason: CANCELLED_REASON };
  const failure = failureOf(error);
  if (error instanceof StorageFailure) {
    return {
      reason: error.leaseLost ? 'another process took over this run (lease lost); this one stopped writing' : error.message,
      failure,
    };
  }
  if (error instanceof ModelError)
    return { reason: `model error (${error.kind}${error.status !== undefined ? ` ${error.status}` : ''}): ${error.message}`, failure };
  return { reason: `internal error: ${errorText(error)}`, failure };
}

export async function pause(session: RunSession, stop: Stop, record = true): Promise<RunOutcome> {
  const { reason, failure } = stop;
  const status = stop.status ?? 'paused';
  if (record) {
    try {
      await session.commit([{ type: 'status', status, reason, ...(failure ? { failure } : {}) }]);
    } catch (error) {
      session.deps.log.log('error', `could not record the pause of run ${session.runId}: ${errorText(error)}`);
    }
  }
  // A refused request is a defect of the request this code built: the log names the API's rule.
  if (failure?.kind === 'refused')
    session.deps.log.log('error', `run ${session.runId}: the API refused the request (a defect, please report it): ${failure.message}`);
  session.deps.log.log('info', `run ${session.runId} ${status}: ${reason}`);
  return { runId: session.runId, status: 'paused', reason, ...(failure ? { failure } : {}) };
}

export async function endRun(session: RunSession, status: 'completed' | 'failed', summary: string): Promise<RunOutcome> {
  await session.commit([session.checkpoint('run_end', [], { status }), { type: 'run_end', status, summary }]);
  return { runId: session.runId, status, reason: summary };
}

/** The model loop: budget check, before_model, call, after_model, then the calls of the answer. */
export async function loopSteps(env: CallEnv): Promise<RunOutcome> {
  const { session } = env;
  // Whether the last answer was empty and the model was asked once to continue.
  let askedAgain = false;
  for (;;) {
    checkCancelled(env.signal);
    const limit = limitHit(session.budget);
    if (limit !== null) {
      const max = { kind: limit.kind, max: limit.max };
      return {
        ...(await pause(session, { reason: limit.reason, failure: { kind: 'limit', message: limit.reason, limit: max } })),
        limit: max,
      };
    }
    await compactIfNeeded(env);
    const { message, stopReason } = await modelStep(env, askedAgain);
    if (message === undefined) {
      if (askedAgain || stopReason === 'refusal') return stopWithoutAnswer(session, stopReason);
      askedAgain = true;
      continue;
    }
    askedAgain = false;
    const outcome = await continueAfterAnswer(env, message, stopReason);
    if (outcome !== null) return outcome;
  }
}

/** The run stops after an empty answer (a refusal without words, or a second empty answer); it stays continuable. */
function stopWithoutAnswer(session: RunSession, stopReason: string): Promise<RunOutcome> {
  if (stopReason === 'refusal') return endRun(session, 'failed', 'the model refused to continue');
  return pause(session, { reason: NO_ANSWER_REASON, failure: { kind: 'invalid_response', message: NO_ANSWER_REASON } });
}

/**
 * One model call. An empty answer is never stored as a message: its usage is, and the first one of
 * a row (unless a refusal) goes with a user turn of its own asking the model to continue; `message`
 * is then undefined.
 */
async function modelStep(env: CallEnv, askedAgain: boolean): Promise<{ message?: MessageParam; stopReason: string }> {
  const { session, tools } = env;
  const { deps } = session;
  session.stepId += 1;
  await session.save('before_model', [{ type: 'budget', budget: withTurnStarted(session.budget) }]);
  const response = await deps.model.complete(buildRequest(session, tools, session.messages, env.signal), (event) =>
    session.emit({ type: 'model', runId: session.runId, event }),
  );
  const usage = usageRecord(session, response);
  const budget = withUsage(session.budget, response.usage, usage.costUsd);
  const said = thinkingDropNote(session, response);
  if (isEmptyAnswer(response.content)) {
    const again = !askedAgain && response.stopReason !== 'refusal';
    const asked: NewRecord[] = again
      ? [
          { type: 'note', kind: 'info', text: 'The model gave an empty answer; it was asked once to continue.' },
          session.messageRecord({ role: 'user', content: [{ type: 'text', text: CONTINUE_AFTER_EMPTY }] }),
        ]
      : [];
    await session.save('after_model', [usage, { type: 'budget', budget }, ...said, ...asked], { stopReason: response.stopReason });
    session.lastStopReason = response.stopReason;
    return { stopReason: response.stopReason };
  }
  // An empty text block beside others is refused by the API in any later request: it carries nothing.
  const content = uniqueToolUseIds(response.content.filter((block) => !(block.type === 'text' && block.text === '')));
  const message = normaliseMessage({ role: 'assistant', content });
  const now = deps.clock.now();
  const planned = toolUsesOf(message).map((toolUse) =>
    plannedEntry(toolUse, tools.get(toolUse.name), session.stepId, now, session.undoing),
  );
  await session.save(
    'after_model',
    [
      session.messageRecord(message),
      ...planned.map((entry) => ({ type: 'ledger' as const, entry })),
      usage,
      { type: 'budget', budget },
      ...said,
    ],
    { stopReason: response.stopReason },
  );
  session.lastStopReason = response.stopReason;
  return { message, stopReason: response.stopReason };
}

/**
 * Two tool calls with one id in one answer: the API refuses every later request that holds them
 * ("tool_use ids must be unique"), so each repeat gets an id of its own before it is stored.
 */
export function uniqueToolUseIds(content: readonly ContentBlock[]): ContentBlock[] {
  const seen = new Set<string>();
  return content.map((block) => {
    if (block.type !== 'tool_use' || typeof block.id !== 'string') return block;
    let id = block.id;
    for (let n = 2; seen.has(id); n += 1) id = `${block.id}_${n}`;
    seen.add(id);
    return id === block.id ? block : { ...block, id };
  });
}

function truncatedToolUse(message: MessageParam, stopReason: string | undefined): Set<string> {
  if (!isCutAnswer(stopReason) || typeof message.content === 'string') return new Set();
  const last = message.content[message.content.length - 1];
  return last?.type === 'tool_use' && typeof last.id === 'string' ? new Set([last.id]) : new Set();
}

/**
 * Tool results with the runtime's note inside the last one, as a text block after its content: a
 * text block after the tool_result blocks of a user message teaches the model to wait for the
 * user after every tool call and provokes empty answers (Anthropic's "Handling stop reasons"),
 * and nothing may come before them.
 */
export function noteInLastResult(results: readonly ToolResultBlock[], note: string): ToolResultBlock[] {
  const last = results[results.length - 1];
  if (last === undefined) return [];
  const own = typeof last.content === 'string' ? (last.content === '' ? [] : [{ type: 'text', text: last.content }]) : (last.content ?? []);
  return [...results.slice(0, -1), { ...last, content: [...own, { type: 'text', text: note }] }];
}

function textOf(message: MessageParam): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : [])).join('\n');
}

function summaryOf(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}…` : trimmed;
}

/**
 * What an assistant answer asks for next: its calls' results, a continuation, or the end.
 * Returns null to go on with the next model call. With `note`, the recovery note rides along.
 */
export async function continueAfterAnswer(
  env: CallEnv,
  message: MessageParam,
  stopReason: string | undefined,
  note?: NoteBuilder,
): Promise<RunOutcome | null> {
  const { session } = env;
  if (stopReason === 'refusal')
    return endRun(session, 'failed', `the model refused to continue${textOf(message) ? `: ${summaryOf(textOf(message))}` : ''}`);
  const toolUses = toolUsesOf(message);
  if (toolUses.length > 0) {
    const { results, reports } = await reconcileCalls({ ...env, truncated: truncatedToolUse(message, stopReason) }, toolUses);
    const content: ContentBlock[] = note ? noteInLastResult(results, note(reports)) : [...results];
    await session.commit([session.messageRecord({ role: 'user', content })]);
    return null;
  }
  if (isCutAnswer(stopReason)) {
    const content: ContentBlock[] = [
      { type: 'text', text: stopReason === 'max_tokens' ? CONTINUE_AFTER_MAX_TOKENS : CONTINUE_AFTER_WINDOW },
    ];
    if (note) content.push({ type: 'text', text: note([]) });
    await session.commit([session.messageRecord({ role: 'user', content })]);
    return null;
  }
  if (stopReason === 'pause_turn') return null;
  return endRun(session, 'completed', summaryOf(textOf(message)) || 'completed');
}
