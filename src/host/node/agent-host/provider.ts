import type * as Anthropic from '../../../core/model/anthropic';
import type { Log } from '../../../core/ports';
import type { ModelProvider } from '../../../core/model/provider';
import { createReplayProvider } from '../../../core/model/replay';

// Which model provider a session runs on, and building it: the same rule for the CLI and the
// extension. Each host brings its own sources (where the key and the replay script come from) and
// its own errors for what is missing.

/** The provider that runs VS Code's language models (the extension only). */
export const LANGUAGE_MODEL_PROVIDER = 'vscode-lm';

export interface ProviderChoice {
  readonly kind: string;
  /** The model the provider falls back to when a request names none (a run's requests always name theirs). */
  readonly model?: string | undefined;
}

export interface ProviderInputs {
  /** The provider the person named for this command (the CLI's --provider); it wins over a recorded one. */
  readonly named?: string | undefined;
  /** The provider and model of a new run when nothing is named (the CLI's default, the extension's settings). */
  readonly configured: ProviderChoice;
  /** A run going on: the provider and model it was recorded with. */
  readonly recorded?: { readonly provider: string; readonly model: string } | undefined;
  /** The providers this host can build: a recorded one outside them falls back to the configured one. */
  readonly available: readonly string[];
}

/**
 * The provider of a session: the one the person named; else, going on with a run, the one the run
 * was recorded with (its messages are in that provider's format) with its model; else the configured one.
 */
export function chooseProvider(inputs: ProviderInputs): ProviderChoice {
  if (inputs.named !== undefined) return { kind: inputs.named, model: inputs.configured.model };
  const { recorded } = inputs;
  if (recorded !== undefined && inputs.available.includes(recorded.provider)) return { kind: recorded.provider, model: recorded.model };
  return inputs.configured;
}

/** Where a host finds what a provider needs; each throws the host's own error when it has nothing. */
export interface ProviderSources {
  /** The replay script and where it came from. */
  replay(): Promise<{ readonly text: string; readonly source: string }>;
  /** The Anthropic API key and where it came from (never logged). */
  apiKey(): Promise<{ readonly key: string; readonly source: string }>;
  /** The Messages API's address, when not the default (read at each session). */
  readonly baseUrl?: (() => string | undefined) | undefined;
  /** VS Code's language models, where the host has them. */
  readonly languageModels?: (() => ModelProvider) | undefined;
  /** The Anthropic provider's module: the CLI loads it (and its SDK) only when a session calls a model; the extension bundles it. */
  anthropic(): Promise<Pick<typeof Anthropic, 'createAnthropicProvider'>>;
}

/** The provider of `choice`, from the host's sources. */
export async function createProvider(choice: ProviderChoice, sources: ProviderSources, log: Log): Promise<ModelProvider> {
  const model = choice.model !== undefined ? { model: choice.model } : {};
  if (choice.kind === 'replay') {
    const script = await sources.replay();
    return createReplayProvider(script.text, { source: script.source, ...model });
  }
  if (choice.kind === LANGUAGE_MODEL_PROVIDER && sources.languageModels !== undefined) {
    log.log('info', `model ${choice.model ?? ''} through VS Code's language model API`);
    return sources.languageModels();
  }
  const key = await sources.apiKey();
  const url = sources.baseUrl?.();
  const at = url !== undefined && url !== '' ? url : undefined;
  log.log(
    'info',
    `model ${choice.model ?? 'by default'} through the Anthropic API (key from ${key.source})${at !== undefined ? ` at ${at}` : ''}`,
  );
  const { createAnthropicProvider } = await sources.anthropic();
  return createAnthropicProvider({ apiKey: key.key, ...model, ...(at !== undefined ? { baseURL: at } : {}) });
}
