import type { Usage } from './provider';

/** USD per million tokens. Cache writes are the 5-minute rate. */
export interface ModelPrice {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  readonly cacheWritePerMTok: number;
  readonly cacheReadPerMTok: number;
}

export interface CostEstimate {
  readonly usd: number;
  /** False when the model is not in the table: `usd` is then 0, not a real cost. */
  readonly priced: boolean;
}

function price(input: number, output: number, cacheRead: number): ModelPrice {
  return { inputPerMTok: input, outputPerMTok: output, cacheWritePerMTok: input * 1.25, cacheReadPerMTok: cacheRead };
}

// Published list prices (platform.claude.com pricing page). Haiku 5.5 is tiered by prompt size;
// the table holds its lower tier.
const PRICES: Readonly<Record<string, ModelPrice>> = {
  'claude-fable-5-1': price(10, 50, 0.25),
  'claude-mythos-5-1': price(10, 50, 0.25),
  'claude-fable-5': price(10, 50, 1),
  'claude-mythos-5': price(10, 50, 1),
  'claude-opus-5-5': price(4, 20, 0.2),
  'claude-opus-5': price(5, 25, 0.5),
  'claude-opus-4-8': price(5, 25, 0.5),
  'claude-opus-4-7': price(5, 25, 0.5),
  'claude-opus-4-6': price(5, 25, 0.5),
  'claude-opus-4-5': price(5, 25, 0.5),
  'claude-opus-4-1': price(15, 75, 1.5),
  'claude-opus-4': price(15, 75, 1.5),
  'claude-sonnet-5-5': price(2, 10, 0.2),
  'claude-sonnet-5': price(2, 10, 0.2),
  'claude-sonnet-4-6': price(3, 15, 0.3),
  'claude-sonnet-4-5': price(3, 15, 0.3),
  'claude-sonnet-4': price(3, 15, 0.3),
  'claude-3-7-sonnet': price(3, 15, 0.3),
  'claude-3-5-sonnet': price(3, 15, 0.3),
  'claude-haiku-5-5': price(0.1, 0.5, 0.01),
  'claude-haiku-4-5': price(1, 5, 0.1),
  'claude-3-5-haiku': price(0.8, 4, 0.08),
  'claude-3-haiku': price(0.25, 1.25, 0.03),
  'claude-3-opus': price(15, 75, 1.5),
};

/**
 * The price of a model id: an exact id from the table, or one of them followed by a snapshot
 * date or `-latest` (claude-sonnet-4-5-20250929). A bare prefix is not enough, so a newer
 * version such as claude-opus-4-9 is reported unpriced rather than priced as claude-opus-4.
 */
export function priceOf(model: string): ModelPrice | undefined {
  const id = model.trim().toLowerCase();
  const exact = PRICES[id];
  if (exact) return exact;
  const snapshot = /^(.*)-(?:\d{8}|latest)$/.exec(id);
  return snapshot?.[1] !== undefined ? PRICES[snapshot[1]] : undefined;
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
