import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { toModelError } from './errors';
import { DEFAULT_MODEL, deprecationWarning, knownModels, modelFacts } from './models';
import type { FetchFunction } from './anthropic';

/** One model as the Models API lists it (only what the picker uses; checked, not trusted). */
export const ListedModel = z.looseObject({
  id: z.string().min(1),
  display_name: z.string().optional(),
  max_input_tokens: z.number().int().positive().nullish(),
  lifecycle: z.string().nullish(),
});
export type ListedModel = z.infer<typeof ListedModel>;

export interface ModelChoice {
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly detail: string;
}

export interface ModelLister {
  /** The models the API key may use, from the cache when it is fresh. */
  list(): Promise<readonly ListedModel[]>;
}

export const MODEL_LIST_TTL_MS = 10 * 60 * 1000;

/** Lists the models through the SDK (`client.models.list()`, every page), cached for `ttlMs`. */
export function createModelLister(options: {
  readonly apiKey: string;
  readonly baseURL?: string;
  readonly fetch?: FetchFunction;
  readonly ttlMs?: number;
  readonly now?: () => number;
}): ModelLister {
  const now = options.now ?? Date.now;
  let cached: { at: number; models: readonly ListedModel[] } | undefined;
  return {
    async list() {
      if (cached && now() - cached.at < (options.ttlMs ?? MODEL_LIST_TTL_MS)) return cached.models;
      const client = new Anthropic({
        apiKey: options.apiKey,
        ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
        ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
        maxRetries: 2,
        logLevel: 'off',
      });
      const models: ListedModel[] = [];
      try {
        for await (const info of client.models.list({ limit: 100 })) {
          const parsed = ListedModel.safeParse(JSON.parse(JSON.stringify(info)));
          if (parsed.success) models.push(parsed.data);
        }
      } catch (error) {
        throw toModelError(error, [options.apiKey], false);
      }
      cached = { at: now(), models };
      return models;
    },
  };
}

function tokens(n: number): string {
  return n >= 1_000_000 ? `${n / 1_000_000}M` : `${Math.round(n / 1000)}K`;
}

/** Picker entries: the listed models (current first, the default on top), each with the table's window and prices. */
export function modelChoices(listed: readonly ListedModel[] | undefined): ModelChoice[] {
  const source: readonly ListedModel[] =
    listed ??
    knownModels()
      .filter((m) => m.current)
      .map((m) => ({ id: m.id }));
  const choices = source.map((model): ModelChoice & { rank: number } => {
    const facts = modelFacts(model.id);
    const window = model.max_input_tokens ?? facts?.contextWindow;
    const price = facts ? `$${facts.price.inputPerMTok} / $${facts.price.outputPerMTok} per MTok` : 'price unknown (not in the table)';
    const warning = deprecationWarning(model.id);
    return {
      id: model.id,
      label: model.id === DEFAULT_MODEL ? `${model.id} (default)` : model.id,
      description: [window !== undefined ? `${tokens(window)} context` : undefined, price].filter(Boolean).join(' · '),
      detail: warning ?? facts?.description ?? model.display_name ?? '',
      rank: model.id === DEFAULT_MODEL ? 0 : warning !== undefined || model.lifecycle === 'deprecated' ? 3 : facts?.current ? 1 : 2,
    };
  });
  return choices.sort((a, b) => a.rank - b.rank).map(({ rank: _rank, ...choice }) => choice);
}
