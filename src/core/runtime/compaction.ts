import type { ContentBlock, MessageParam, ToolResultBlock } from '../model/messages';
import { runsPrefixCheck } from '../model/models';
import { planNote, type Plan } from '../store/plan';
import type { NewRecord } from '../store/records';
import { withTurnStarted, withUsage } from './budget';
import { PauseSignal, type CallEnv } from './calls';
import { buildRequest, contextBudgetOf, estimateTokens, maxTokensOf, usageRecord } from './request';
import { normaliseMessage, type RunSession } from './session';

// Context management. Before a model call whose request would pass the run's context budget,
// the history is compacted: first the results of older tool calls are cleared (a short note
// names the call; the ledger keeps the result), and if that is not enough, the model writes a
// summary of the work so far that replaces the messages before the latest step. A compaction is
// one commit group: a `compaction` record, the whole new history as message records from index
// 0, and the `compacted` checkpoint. Nothing is written before the summary is in hand, so a run
// cut at any instant resumes from the history before or after it, never from half of it.
// On the models that run the prefix check (preserved thinking), a thinking block is bound to
// everything before it: a compaction drops thinking from every message after the first one it
// changed, as Anthropic's page "Prefix checks on thinking blocks" recommends ("remove thinking
// from the kept turns"), so no request sends a block whose prefix changed.

export const CLEARED_MARKER = '[cleared to save context]';
export const SUMMARY_MARKER = '[summary of the earlier work]';
export const SUMMARY_REQUEST =
  'The conversation is about to pass its context budget. Write a summary of the work so far that lets you continue the task without the earlier messages: the goal, what was done (files read and changed, commands run and their outcomes), what was learned, and what remains. Do not call any tool; answer with the summary only.';
/** Results shorter than this are left alone: clearing them saves little. */
const MIN_CLEARED_CHARS = 200;
/** User messages at the end whose tool results are never cleared (the model has not read them all yet). */
const KEEP_USER_MESSAGES = 2;
/** Clearing alone must bring the request down to this share of the budget, else the model summarises. */
const CLEARED_TARGET = 0.4;

/** The request size (tokens) above which the next call compacts first. */
function thresholdOf(env: CallEnv): { budget: number; threshold: number } {
  const { settings } = env.session.run;
  const budget = contextBudgetOf(settings, env.maxContextTokens);
  const reserve = maxTokensOf(settings) + Math.ceil(SUMMARY_REQUEST.length / 2);
  return { budget, threshold: budget - reserve };
}

function estimate(env: CallEnv, messages: readonly MessageParam[]): number {
  return estimateTokens(buildRequest(env.session, env.tools, messages, undefined));
}

function clearedNote(toolName: string | undefined, callId: string): string {
  return `${CLEARED_MARKER} The result of ${toolName ?? 'the tool'} call ${callId} was cleared from the conversation; the run's ledger keeps it. Call the tool again if you need it.`;
}

/** The history with the results of older tool calls cleared, and the calls cleared. */
export function clearOldToolResults(
  session: RunSession,
  messages: readonly MessageParam[],
): { messages: MessageParam[]; cleared: string[]; firstChanged: number } {
  const cleared: string[] = [];
  let firstChanged = messages.length;
  let usersSeen = 0;
  const out = [...messages];
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i]!;
    if (message.role !== 'user') continue;
    usersSeen += 1;
    if (usersSeen <= KEEP_USER_MESSAGES || typeof message.content === 'string') continue;
    let changed = false;
    const content = message.content.map((block): ContentBlock => {
      if (block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') return block;
      const text = typeof block.content === 'string' ? block.content : JSON.stringify(block.content ?? '');
      if (text.length < MIN_CLEARED_CHARS || text.startsWith(CLEARED_MARKER)) return block;
      changed = true;
      cleared.push(block.tool_use_id);
      const note = clearedNote(session.ledger.get(block.tool_use_id)?.toolName, block.tool_use_id);
      return { type: 'tool_result', tool_use_id: block.tool_use_id, content: note, ...(block.is_error === true ? { is_error: true } : {}) };
    });
    if (changed) {
      out[i] = { role: 'user', content };
      firstChanged = i;
    }
  }
  return { messages: out, cleared: cleared.reverse(), firstChanged };
}

const isThinking = (block: ContentBlock): boolean => block.type === 'thinking' || block.type === 'redacted_thinking';
/** What an assistant message of thinking alone keeps (a message may not be empty). */
const THINKING_LEFT_OUT = '(thinking left out when the conversation was compacted)';

/**
 * The messages with the thinking of every message from `from` on dropped, on a model that runs
 * the prefix check (elsewhere the API ignores earlier turns' thinking, and a budget run's latest
 * turn must keep its own).
 */
export function withoutThinkingFrom(model: string, messages: readonly MessageParam[], from: number): MessageParam[] {
  if (!runsPrefixCheck(model)) return [...messages];
  return messages.map((message, i) => {
    if (i < from || typeof message.content === 'string' || !message.content.some(isThinking)) return message;
    const kept = message.content.filter((block) => !isThinking(block));
    return { role: message.role, content: kept.length > 0 ? kept : [{ type: 'text', text: THINKING_LEFT_OUT }] };
  });
}

/** Where the summary's cut falls: the latest assistant answer (it and what follows are kept). */
function summaryCut(messages: readonly MessageParam[]): number {
  for (let i = messages.length - 1; i > 1; i--) if (messages[i]!.role === 'assistant' && messages[i - 1]!.role === 'user') return i;
  return -1;
}

function textOf(content: readonly ContentBlock[]): string {
  return content
    .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
    .join('\n')
    .trim();
}

/** Asks the model for the summary over the messages before `cut` (the prefix the previous call sent, so it reads from the cache). */
async function summarise(env: CallEnv, messages: readonly MessageParam[], cut: number): Promise<{ text: string; records: NewRecord[] }> {
  const { session } = env;
  const last = messages[cut - 1]!;
  const lastContent: ContentBlock[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
  const asked = [
    ...messages.slice(0, cut - 1),
    { role: 'user' as const, content: [...lastContent, { type: 'text', text: SUMMARY_REQUEST }] },
  ];
  // Counted before it is made, like every model call, so a crash loop cannot call the model forever.
  await session.commit([{ type: 'budget', budget: withTurnStarted(session.budget) }]);
  const response = await session.deps.model.complete(buildRequest(session, env.tools, asked, env.signal), (event) =>
    session.emit({ type: 'model', runId: session.runId, event }),
  );
  const usage = usageRecord(session, response, 'summary');
  const text = textOf(response.content) || '(the model wrote no summary)';
  return { text, records: [usage, { type: 'budget', budget: withUsage(session.budget, response.usage, usage.costUsd) }] };
}

function taskText(first: MessageParam | undefined): ContentBlock[] {
  if (!first) return [];
  return typeof first.content === 'string' ? [{ type: 'text', text: first.content }] : first.content.filter((b) => b.type === 'text');
}

/**
 * The history with the model's plan said again at its end (a compaction may drop the calls that set
 * it): appended to the last user message, whose blocks and every message before it stay as they
 * are. After tool_result blocks a text block provokes empty answers, so there the note goes inside
 * the last result, as the recovery note does (loop.ts, noteInLastResult). A history that does not
 * end with the person's side (a paused turn the model continues) is left alone.
 */
export function withPlanRestated(messages: readonly MessageParam[], plan: Plan | undefined): MessageParam[] {
  const last = messages.at(-1);
  if (plan === undefined || plan.steps.length === 0 || last?.role !== 'user') return [...messages];
  const note: ContentBlock = { type: 'text', text: planNote(plan) };
  const content: ContentBlock[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
  const end = content.at(-1) as ToolResultBlock | undefined;
  if (end?.type === 'tool_result') {
    const own = typeof end.content === 'string' ? (end.content === '' ? [] : [{ type: 'text', text: end.content }]) : (end.content ?? []);
    content[content.length - 1] = { ...end, content: [...own, note] };
  } else content.push(note);
  return [...messages.slice(0, -1), { role: 'user', content }];
}

/** Compacts the history when the next request would pass the context budget; a no-op otherwise. */
export async function compactIfNeeded(env: CallEnv): Promise<void> {
  const { session } = env;
  const { budget, threshold } = thresholdOf(env);
  const before = estimate(env, session.messages);
  if (before <= threshold) return;
  const cleared = clearOldToolResults(session, session.messages);
  const model = session.run.settings.model;
  const clearedMessages = withPlanRestated(withoutThinkingFrom(model, cleared.messages, cleared.firstChanged), session.plan);
  const afterClearing = estimate(env, clearedMessages);
  if (cleared.cleared.length > 0 && afterClearing <= threshold * CLEARED_TARGET) {
    return commitCompaction(
      session,
      'cleared_tool_results',
      clearedMessages,
      cleared.cleared,
      { before, after: afterClearing, budget },
      [],
    );
  }
  const cut = summaryCut(session.messages);
  if (cut < 0) throw contextTooSmall(`the context budget (${budget} tokens) is too small for the latest step (about ${before} tokens)`);
  const summary = await summarise(env, session.messages, cut);
  const head: MessageParam = {
    role: 'user',
    content: [...taskText(session.messages[0]), { type: 'text', text: `${SUMMARY_MARKER}\n${summary.text}` }],
  };
  const next = withPlanRestated(withoutThinkingFrom(model, [head, ...session.messages.slice(cut)], 0), session.plan);
  const after = estimate(env, next);
  if (after > threshold)
    throw contextTooSmall(`the context budget (${budget} tokens) is too small even after a summary (about ${after} tokens)`);
  await commitCompaction(session, 'summary', next, [], { before, after, budget }, summary.records);
}

async function commitCompaction(
  session: RunSession,
  kind: 'cleared_tool_results' | 'summary',
  messages: readonly MessageParam[],
  clearedCallIds: readonly string[],
  tokens: { before: number; after: number; budget: number },
  extra: readonly NewRecord[],
): Promise<void> {
  const records: NewRecord[] = [
    {
      type: 'compaction',
      stepId: session.stepId,
      kind,
      tokensBefore: tokens.before,
      tokensAfter: tokens.after,
      contextBudget: tokens.budget,
      messagesBefore: session.messages.length,
      messagesAfter: messages.length,
      clearedCallIds: [...clearedCallIds],
    },
    ...messages.map((message, index): NewRecord => ({
      type: 'message',
      index,
      stepId: session.stepId,
      message: normaliseMessage(message),
    })),
    ...extra,
  ];
  session.deps.log.log('info', `run ${session.runId}: compacted (${kind}) from about ${tokens.before} to ${tokens.after} tokens`);
  await session.save('compacted', records);
}

function contextTooSmall(reason: string): PauseSignal {
  return new PauseSignal(reason, { kind: 'limit', message: reason });
}
