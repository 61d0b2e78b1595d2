// The one table of what this project knows about each Claude model: its context window, its
// prices, how it thinks, and whether it is deprecated. Every figure names where it comes from.
// Prices are USD per million tokens; cache writes are the 5-minute rate (1.25x input).

/** Where a figure comes from. */
const SOURCE = {
  pricing: 'platform.claude.com pricing page (list prices)',
  page: "the model's page on platform.claude.com (models/<model>/overview)",
  overview: 'platform.claude.com models overview (comparison table)',
  assumed: 'not published where we looked: 200K assumed, the window of every Claude model before 1M windows',
  sdk: '@anthropic-ai/sdk internal/data/deprecated-models (end-of-life dates)',
} as const;

export type Thinking =
  /** `thinking: {type: 'adaptive'}`; manual budgets are refused. */
  | 'adaptive'
  /** `thinking: {type: 'enabled', budget_tokens}`. */
  | 'extended'
  /** Thinks whatever the request says. */
  | 'always';

export interface ModelPrice {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  readonly cacheWritePerMTok: number;
  readonly cacheReadPerMTok: number;
}

export interface ModelFacts {
  readonly id: string;
  readonly description: string;
  readonly contextWindow: number;
  readonly contextWindowSource: string;
  readonly price: ModelPrice;
  readonly priceSource: string;
  readonly thinking: Thinking;
  /** A current model is offered in the model setting and the picker. */
  readonly current: boolean;
  /** End of life (SDK's list) and the model to move to. */
  readonly deprecated?: { readonly endOfLife: string; readonly replacement: string; readonly source: string };
}

function price(input: number, output: number, cacheRead: number): ModelPrice {
  return { inputPerMTok: input, outputPerMTok: output, cacheWritePerMTok: input * 1.25, cacheReadPerMTok: cacheRead };
}

const M = 1_000_000;
const K200 = 200_000;

type Row = [id: string, description: string, window: number, windowSource: string, price: ModelPrice, thinking: Thinking, current: boolean];

// prettier-ignore
const ROWS: readonly Row[] = [
  ['claude-fable-5-2', 'Claude Fable 5.2: demanding reasoning and long-horizon agentic work', M, SOURCE.page, price(8, 40, 0.2), 'always', true],
  ['claude-opus-5-5', 'Claude Opus 5.5: complex agentic coding and enterprise work', M, SOURCE.page, price(4, 20, 0.2), 'always', true],
  ['claude-sonnet-5-5', 'Claude Sonnet 5.5: the best combination of speed and intelligence (default)', M, SOURCE.page, price(2, 10, 0.2), 'adaptive', true],
  ['claude-haiku-5-5', 'Claude Haiku 5.5: the fastest and cheapest', K200, SOURCE.assumed, price(0.1, 0.5, 0.01), 'extended', true],
  ['claude-haiku-4-5', 'Claude Haiku 4.5: fast, near-frontier intelligence', K200, SOURCE.overview, price(1, 5, 0.1), 'extended', true],
  ['claude-fable-5-1', 'Claude Fable 5.1', M, SOURCE.overview, price(10, 50, 0.25), 'always', false],
  ['claude-mythos-5-1', 'Claude Mythos 5.1', M, SOURCE.page, price(10, 50, 0.25), 'always', false],
  ['claude-fable-5', 'Claude Fable 5', M, SOURCE.page, price(10, 50, 1), 'always', false],
  ['claude-mythos-5', 'Claude Mythos 5', M, SOURCE.page, price(10, 50, 1), 'always', false],
  ['claude-opus-5', 'Claude Opus 5', M, SOURCE.overview, price(5, 25, 0.5), 'adaptive', false],
  ['claude-sonnet-5', 'Claude Sonnet 5', M, SOURCE.page, price(2, 10, 0.2), 'adaptive', false],
  ['claude-opus-4-8', 'Claude Opus 4.8', K200, SOURCE.assumed, price(5, 25, 0.5), 'adaptive', false],
  ['claude-opus-4-7', 'Claude Opus 4.7', K200, SOURCE.assumed, price(5, 25, 0.5), 'adaptive', false],
  ['claude-opus-4-6', 'Claude Opus 4.6', K200, SOURCE.assumed, price(5, 25, 0.5), 'adaptive', false],
  ['claude-sonnet-4-6', 'Claude Sonnet 4.6', K200, SOURCE.assumed, price(3, 15, 0.3), 'extended', false],
  ['claude-opus-4-5', 'Claude Opus 4.5', K200, SOURCE.assumed, price(5, 25, 0.5), 'extended', false],
  ['claude-sonnet-4-5', 'Claude Sonnet 4.5', K200, SOURCE.assumed, price(3, 15, 0.3), 'extended', false],
  ['claude-opus-4-1', 'Claude Opus 4.1', K200, SOURCE.assumed, price(15, 75, 1.5), 'extended', false],
  ['claude-opus-4', 'Claude Opus 4', K200, SOURCE.assumed, price(15, 75, 1.5), 'extended', false],
  ['claude-sonnet-4', 'Claude Sonnet 4', K200, SOURCE.assumed, price(3, 15, 0.3), 'extended', false],
  ['claude-3-7-sonnet', 'Claude Sonnet 3.7', K200, SOURCE.assumed, price(3, 15, 0.3), 'extended', false],
  ['claude-3-5-sonnet', 'Claude Sonnet 3.5', K200, SOURCE.assumed, price(3, 15, 0.3), 'extended', false],
  ['claude-3-5-haiku', 'Claude Haiku 3.5', K200, SOURCE.assumed, price(0.8, 4, 0.08), 'extended', false],
  ['claude-3-haiku', 'Claude Haiku 3', K200, SOURCE.assumed, price(0.25, 1.25, 0.03), 'extended', false],
  ['claude-3-opus', 'Claude Opus 3', K200, SOURCE.assumed, price(15, 75, 1.5), 'extended', false],
];

/** The SDK's deprecated models (ids without snapshot dates), with the model to move to. */
const DEPRECATED: Readonly<Record<string, { endOfLife: string; replacement: string }>> = {
  'claude-sonnet-4-5': { endOfLife: 'November 30th, 2026', replacement: 'claude-sonnet-5-5' },
  'claude-opus-4-5': { endOfLife: 'January 22nd, 2027', replacement: 'claude-opus-5-5' },
  'claude-mythos-preview': { endOfLife: 'June 30th, 2026', replacement: 'claude-fable-5-2' },
};

export const DEFAULT_MODEL = 'claude-sonnet-5-5';

const TABLE: ReadonlyMap<string, ModelFacts> = new Map(
  ROWS.map(([id, description, contextWindow, contextWindowSource, p, thinking, current]) => {
    const deprecated = DEPRECATED[id];
    const facts: ModelFacts = {
      id,
      description,
      contextWindow,
      contextWindowSource,
      price: p,
      priceSource: SOURCE.pricing,
      thinking,
      current,
      ...(deprecated ? { deprecated: { ...deprecated, source: SOURCE.sdk } } : {}),
    };
    return [id, facts];
  }),
);

/** The base id of a dated snapshot or `-latest` alias (claude-sonnet-4-5-20250929 -> claude-sonnet-4-5). */
export function baseModelId(model: string): string {
  const id = model.trim().toLowerCase();
  const snapshot = /^(.*)-(?:\d{8}|latest)$/.exec(id);
  return snapshot?.[1] !== undefined && (TABLE.has(snapshot[1]) || snapshot[1] in DEPRECATED) ? snapshot[1] : id;
}

/**
 * The facts of a model id: an exact id from the table, or one of them followed by a snapshot
 * date or `-latest`. A bare prefix is not enough, so a newer version such as claude-opus-4-9 is
 * unknown rather than taken for claude-opus-4.
 */
export function modelFacts(model: string): ModelFacts | undefined {
  return TABLE.get(baseModelId(model));
}

/** Every model of the table, current ones first. */
export function knownModels(): readonly ModelFacts[] {
  return [...TABLE.values()].sort((a, b) => Number(b.current) - Number(a.current));
}

/** A warning naming the replacement when the model is deprecated, else undefined. */
export function deprecationWarning(model: string): string | undefined {
  const id = baseModelId(model);
  const deprecated = DEPRECATED[id];
  if (!deprecated) return undefined;
  return `model ${model} is deprecated and reaches end of life on ${deprecated.endOfLife}; use ${deprecated.replacement} instead`;
}

/**
 * The models with preserved thinking that run the prefix check: a thinking block sent back is
 * bound to everything before it (system, tools, earlier messages). Source: Anthropic's page
 * "Prefix checks on thinking blocks" (build-with-claude/preserved-thinking/prefix-checks).
 */
const PREFIX_CHECK_MODELS: ReadonlySet<string> = new Set([
  'claude-fable-5-2',
  'claude-mythos-5-2',
  'claude-fable-5-1',
  'claude-mythos-5-1',
  'claude-opus-5-5',
  'claude-sonnet-5-5',
  'claude-haiku-5-5',
]);

export function runsPrefixCheck(model: string): boolean {
  return PREFIX_CHECK_MODELS.has(baseModelId(model));
}

/**
 * The models that refuse `thinking: {type: "disabled"}` and whose lowest setting is
 * `{type: "between_tools"}` (no up-front thinking; the words between tool calls still come back
 * as thinking text). Source: "What's new in Claude Sonnet 5.5" (models/sonnet-5-5/whats-new-sonnet-5-5).
 */
const BETWEEN_TOOLS_MODELS: ReadonlySet<string> = new Set(['claude-sonnet-5-5']);

export function lowestThinkingIsBetweenTools(model: string): boolean {
  return BETWEEN_TOOLS_MODELS.has(baseModelId(model));
}

/** The context window to budget for when a run sets none (200K for a model we do not know). */
export function contextWindowOf(model: string): number {
  return modelFacts(model)?.contextWindow ?? K200;
}
