import { isEmptyAnswer, type MessageParam } from '../model/messages';
import { contextWindowOf, lowestThinkingIsBetweenTools, modelFacts, runsPrefixCheck } from '../model/models';
import { costOf } from '../model/pricing';
import type { ModelRequest, ModelResponse, ThinkingParam } from '../model/provider';
import type { NewRecord, RunSettings } from '../store/records';
import type { ToolRegistry } from '../tools/registry';
import type { RunSession } from './session';

/**
 * Bytes of request JSON counted as one token when estimating a request's size. Real tokenizers
 * give 3.5 to 4 bytes a token for English and code; 3 errs on the side of compacting early.
 */
export const BYTES_PER_TOKEN_ESTIMATE = 3;

/**
 * The thinking parameter a run's setting asks for, as the model takes it, each value explicit:
 * - off: none, except on a model that refuses `disabled` (its lowest setting, `between_tools`) and
 *   on a model that always thinks (adaptive);
 * - adaptive, and a budget on a model that takes none: adaptive;
 * - N: a budget of N tokens on the models that take one.
 * On the models with preserved thinking, adaptive asks for `display: "summarized"`: the words the
 * model writes between tool calls come back inside thinking blocks, empty under the default display.
 */
export function thinkingParam(settings: RunSettings): ThinkingParam | undefined {
  const setting = settings.thinking;
  const facts = modelFacts(settings.model);
  const adaptive: ThinkingParam = runsPrefixCheck(settings.model) ? { type: 'adaptive', display: 'summarized' } : { type: 'adaptive' };
  if (setting === undefined) {
    if (lowestThinkingIsBetweenTools(settings.model)) return { type: 'between_tools' };
    return facts?.thinking === 'always' ? adaptive : undefined;
  }
  if (setting.type === 'adaptive' || facts?.thinking !== 'extended') return adaptive;
  return { type: 'enabled', budget_tokens: setting.budgetTokens };
}

/** The thinking parameter every request of a run sends: the one recorded at its start, else its setting's. */
export function runThinkingParam(run: RunSession['run']): ThinkingParam | undefined {
  if (run.thinkingSent !== undefined) return run.thinkingSent.type === 'none' ? undefined : run.thinkingSent;
  return thinkingParam(run.settings);
}

/** max_tokens of a call: the output per call, plus the thinking budget that counts within it. */
export function maxTokensOf(settings: RunSettings): number {
  const thinking = thinkingParam(settings);
  return settings.maxOutputTokensPerCall + (thinking?.type === 'enabled' ? thinking.budget_tokens : 0);
}

/**
 * An empty assistant message an older version stored (it now never stores one): the API refuses
 * every request with it before the end, so a request leaves it out; the journal keeps it as written.
 */
function isStoredEmptyAnswer(message: MessageParam): boolean {
  return message.role === 'assistant' && typeof message.content !== 'string' && isEmptyAnswer(message.content);
}

/** The model request of a step over the given messages (the session's, unless a compaction builds its own). */
export function buildRequest(
  session: RunSession,
  tools: ToolRegistry,
  messages: readonly MessageParam[],
  signal: AbortSignal | undefined,
): ModelRequest {
  const { run } = session;
  const thinking = runThinkingParam(run);
  return {
    model: run.settings.model,
    ...(run.system !== undefined ? { system: run.system } : {}),
    messages: messages.filter((message, i) => i === messages.length - 1 || !isStoredEmptyAnswer(message)),
    tools: run.tools ?? tools.specs(),
    maxTokens: maxTokensOf(run.settings),
    ...(thinking !== undefined ? { thinking } : {}),
    ...(signal !== undefined ? { signal } : {}),
  };
}

/** A request's input size in tokens, estimated from its bytes (a bound, not a count). */
export function estimateTokens(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>): number {
  const json = JSON.stringify({ system: request.system, tools: request.tools, messages: request.messages });
  return Math.ceil(new TextEncoder().encode(json).length / BYTES_PER_TOKEN_ESTIMATE);
}

/** The context budget of a run: the resume's override, the run's setting, else the model's window. */
export function contextBudgetOf(settings: RunSettings, override?: number): number {
  return override ?? settings.maxContextTokens ?? contextWindowOf(settings.model);
}

/** The usage record of one model call: tokens with cache reads and writes apart, and their price. */
export function usageRecord(session: RunSession, response: ModelResponse, purpose?: 'summary'): Extract<NewRecord, { type: 'usage' }> {
  const model = response.model || session.run.settings.model;
  const priced = costOf(model, response.usage);
  const costUsd = session.deps.costOf ? session.deps.costOf(response.model, response.usage) : priced.usd;
  return {
    type: 'usage',
    stepId: session.stepId,
    model,
    inputTokens: response.usage.inputTokens,
    outputTokens: response.usage.outputTokens,
    cacheReadInputTokens: response.usage.cacheReadInputTokens ?? 0,
    cacheCreationInputTokens: response.usage.cacheCreationInputTokens ?? 0,
    costUsd,
    priced: session.deps.costOf !== undefined || priced.priced,
    ...(purpose !== undefined ? { purpose } : {}),
  };
}

const DROP_REASONS: Readonly<Record<string, string>> = {
  account_mismatch: "written under another account's key",
  model_mismatch: 'written by a model this one cannot read',
  prefix_mismatch: 'their conversation changed before them',
};

/**
 * The note for thinking blocks the API left out of a request ("Preserved thinking": another
 * model's, another account's, or a changed prefix under drop_block), said once a session so a
 * resume under a teammate's or a worker's key, or another model, is never a surprise.
 */
export function thinkingDropNote(session: RunSession, response: ModelResponse): NewRecord[] {
  const dropped = (response.inputTransformations ?? []).filter((t) => t.type === 'thinking_dropped');
  if (dropped.length === 0 || session.thinkingDropSaid) return [];
  session.thinkingDropSaid = true;
  const reasons = [...new Set(dropped.map((t) => DROP_REASONS[t.reason ?? ''] ?? t.reason ?? 'no reason given'))];
  const text = `The API left out ${dropped.length} thinking block${dropped.length === 1 ? '' : 's'} of earlier turns (${reasons.join('; ')}); the model goes on without that reasoning.`;
  session.deps.log.log('info', `run ${session.runId}: ${text}`);
  return [{ type: 'note', kind: 'info', text }];
}
