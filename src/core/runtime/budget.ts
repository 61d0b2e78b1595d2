import type { MessageParam } from '../model/messages';
import type { Usage } from '../model/provider';
import type { Budget, NewRecord, RunSettings } from '../store/records';

/** Most model calls of a run when nothing says otherwise (the CLI's and the extension's default). */
export const DEFAULT_MAX_TURNS = 50;
/** max_tokens of each model call when nothing says otherwise. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8192;

/** The limit a run has reached: which, its value, and a sentence for the person. */
export interface LimitHit {
  readonly kind: 'turns' | 'tokens' | 'cost';
  readonly max: number;
  readonly reason: string;
}

/** The limit a run has reached, or null when it may call the model. */
export function limitHit(budget: Budget): LimitHit | null {
  if (budget.turns >= budget.maxTurns)
    return { kind: 'turns', max: budget.maxTurns, reason: `turn limit reached (${budget.turns} of ${budget.maxTurns} model calls)` };
  const tokens = budget.inputTokens + budget.outputTokens;
  if (budget.maxTokens !== undefined && tokens >= budget.maxTokens)
    return { kind: 'tokens', max: budget.maxTokens, reason: `token limit reached (${tokens} of ${budget.maxTokens} tokens)` };
  if (budget.maxCostUsd !== undefined && budget.costUsd >= budget.maxCostUsd) {
    const reason = `cost limit reached (${usd(budget.costUsd, budget.maxCostUsd)} of ${usd(budget.maxCostUsd, budget.costUsd)})`;
    return { kind: 'cost', max: budget.maxCostUsd, reason };
  }
  return null;
}

/** Most digits after the point a dollar amount is shown with. */
const MAX_USD_DIGITS = 8;

/**
 * A dollar amount in words: two digits from a dollar up, four under it ("$0.0004", never "$0.00"
 * for a cost), more while it would read the same as `other` (the limit it is told beside).
 */
export function usd(amount: number, other?: number): string {
  const shown = (n: number, digits: number) => `$${n.toFixed(digits)}`;
  let digits = amount === 0 || Math.abs(amount) >= 1 ? 2 : 4;
  while (digits < MAX_USD_DIGITS && amount !== 0 && Number(amount.toFixed(digits)) === 0) digits += 1;
  while (digits < MAX_USD_DIGITS && other !== undefined && other !== amount && shown(other, digits) === shown(amount, digits)) digits += 1;
  return shown(amount, digits);
}

/** The limit a run has reached, as a sentence for the person, or null when it may call the model. */
export function limitReached(budget: Budget): string | null {
  return limitHit(budget)?.reason ?? null;
}

/** A model call is counted before it is made, so a crash loop cannot call the model forever. */
export function withTurnStarted(budget: Budget): Budget {
  return { ...budget, turns: budget.turns + 1 };
}

export function withUsage(budget: Budget, usage: Usage, costUsd: number): Budget {
  const input = usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
  return {
    ...budget,
    inputTokens: budget.inputTokens + input,
    outputTokens: budget.outputTokens + usage.outputTokens,
    tokensUsed: input + usage.outputTokens,
    costUsd: budget.costUsd + costUsd,
  };
}

/** New limits a person gives a paused run (absolute values; each must raise its limit). */
export interface LimitRaise {
  readonly maxTurns?: number;
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
}

/**
 * The limit a resume would stop at again before any request: the run's budget, with the raise
 * given, is still at a limit, and its history ends with a user message (an answer at the end is
 * the resume's work: its tool calls run, or a final answer ends the run). A host asks for the new
 * limit (or names the flag) instead of resuming.
 */
export function limitBeforeAnyRequest(
  state: { readonly budget: Budget; readonly messages: readonly MessageParam[] },
  raise: LimitRaise = {},
): LimitHit | undefined {
  if (state.messages[state.messages.length - 1]?.role === 'assistant') return undefined;
  const defined = Object.fromEntries(Object.entries(raise).filter(([, v]) => v !== undefined)) as LimitRaise;
  return limitHit({ ...state.budget, ...defined }) ?? undefined;
}

/**
 * The records that raise a run's limits: a `limits` record (what was raised, from what) and the
 * budget with the new limits, counters untouched. Throws a RangeError naming a value that does
 * not raise its limit.
 */
export function raiseRecords(budget: Budget, raise: LimitRaise): NewRecord[] {
  const check = (name: string, value: number | undefined, current: number | undefined): void => {
    if (value === undefined) return;
    if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a positive number, got ${value}`);
    if (current !== undefined && value <= current) throw new RangeError(`${name} ${value} does not raise the limit (now ${current})`);
  };
  check('maxTurns', raise.maxTurns, budget.maxTurns);
  check('maxTokens', raise.maxTokens, budget.maxTokens);
  check('maxCostUsd', raise.maxCostUsd, budget.maxCostUsd);
  if (raise.maxTurns === undefined && raise.maxTokens === undefined && raise.maxCostUsd === undefined) return [];
  const before: Extract<NewRecord, { type: 'limits' }>['before'] = {
    maxTurns: budget.maxTurns,
    ...(budget.maxTokens !== undefined ? { maxTokens: budget.maxTokens } : {}),
    ...(budget.maxCostUsd !== undefined ? { maxCostUsd: budget.maxCostUsd } : {}),
  };
  const defined = Object.fromEntries(Object.entries(raise).filter(([, v]) => v !== undefined)) as LimitRaise;
  return [
    { type: 'limits', ...defined, before },
    { type: 'budget', budget: { ...budget, ...defined } },
  ];
}

/**
 * Why a run's cost limit cannot stop it: the model has no price (a VS Code language model, or one
 * the table does not know), so each call counts $0. Said in the run (a warning note) and the log,
 * never left silently inert. Undefined when there is no cost limit or the model is priced.
 */
export function costLimitWarning(settings: RunSettings, priced: boolean): string | undefined {
  if (settings.maxCostUsd === undefined || priced) return undefined;
  const other =
    settings.maxTokens !== undefined
      ? 'the turn and token limits still apply'
      : 'the turn limit still applies (a token limit would bound it too)';
  return `the cost limit (${usd(settings.maxCostUsd)}) cannot be enforced for model ${settings.model}: its price is unknown, so its calls count as $0; ${other}`;
}

/**
 * The raise a person typed for a limit the run stopped at ("Raise to ..."): the new limit, above
 * the one reached; a message saying what is wrong otherwise.
 */
export function raiseTo(limit: { kind: 'turns' | 'tokens' | 'cost'; max: number }, text: string): LimitRaise | string {
  const value = Number(text.trim().replace(/^\$/, ''));
  const whole = limit.kind !== 'cost';
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value)))
    return whole ? 'a whole number, please' : 'an amount in US dollars, please';
  if (value <= limit.max) return `more than the limit reached (${limit.max}), please`;
  return limit.kind === 'turns' ? { maxTurns: value } : limit.kind === 'tokens' ? { maxTokens: value } : { maxCostUsd: value };
}
