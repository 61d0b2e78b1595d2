import { modelFacts, type ModelPrice } from './models';
import type { Usage } from './provider';

export type { ModelPrice } from './models';

export interface CostEstimate {
  readonly usd: number;
  /** False when the model is not in the table: `usd` is then 0, not a real cost. */
  readonly priced: boolean;
}

/** The price of a model id, from the model table (models.ts), or undefined for an unknown model. */
export function priceOf(model: string): ModelPrice | undefined {
  return modelFacts(model)?.price;
}

export function costOf(model: string, usage: Usage): CostEstimate {
  const p = priceOf(model);
  if (!p) return { usd: 0, priced: false };
  const usd =
    (usage.inputTokens * p.inputPerMTok +
      usage.outputTokens * p.outputPerMTok +
      (usage.cacheCreationInputTokens ?? 0) * p.cacheWritePerMTok +
      (usage.cacheReadInputTokens ?? 0) * p.cacheReadPerMTok) /
    1_000_000;
  return { usd, priced: true };
}
