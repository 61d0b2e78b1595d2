import type { Usage } from '../model/provider';
import type { Budget } from '../store/records';

/** Most model calls of a run when nothing says otherwise (the CLI's and the extension's default). */
export const DEFAULT_MAX_TURNS = 50;
/** max_tokens of each model call when nothing says otherwise. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8192;

/** The limit a run has reached, as a sentence for the person, or null when it may call the model. */
export function limitReached(budget: Budget): string | null {
  if (budget.turns >= budget.maxTurns) return `turn limit reached (${budget.turns} of ${budget.maxTurns} model calls)`;
  const tokens = budget.inputTokens + budget.outputTokens;
  if (budget.maxTokens !== undefined && tokens >= budget.maxTokens) return `token limit reached (${tokens} of ${budget.maxTokens} tokens)`;
  if (budget.maxCostUsd !== undefined && budget.costUsd >= budget.maxCostUsd) {
    return `cost limit reached ($${budget.costUsd.toFixed(4)} of $${budget.maxCostUsd.toFixed(2)})`;
  }
  return null;
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
