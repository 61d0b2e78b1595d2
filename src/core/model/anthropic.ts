import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { withCacheBreakpoints } from './cache';
import { scrubSecrets, toModelError } from './errors';
import { ContentBlock } from './messages';
import { DEFAULT_MODEL } from './models';
import { ModelError, type ModelEvent, type ModelProvider, type ModelRequest, type ModelResponse } from './provider';
import { errorText } from '../error-text';

export { DEFAULT_MODEL };
export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface AnthropicProviderOptions {
  /** Passed to the SDK client only: never logged, never stored, scrubbed from errors. */
  readonly apiKey: string;
  /** Defaults to ANTHROPIC_BASE_URL (read by the SDK), then the public API. */
  readonly baseURL?: string;
  /** Used when a request names no model. */
  readonly model?: string;
  /** SDK retries for connection errors, 408/409/429/5xx/529; also bounds retries of a stream cut mid-way. */
  readonly maxRetries?: number;
  /**
   * The SDK's timeout until an answer's headers; also how long a started stream may send nothing
   * (not even a ping) before it is cut and asked again (the SDK's own timeout ends at the headers).
   */
  readonly timeoutMs?: number;
  readonly fetch?: FetchFunction;
  /** Stream the response (default) or ask for one plain JSON message. */
  readonly streaming?: boolean;
  /** Base delay before retrying a stream cut after its headers; doubled per attempt. */
  readonly streamRetryDelayMs?: number;
}

const ApiMessage = z.looseObject({
  id: z.string(),
  model: z.string(),
  content: z.array(ContentBlock),
  stop_reason: z.string().nullable(),
  usage: z.looseObject({
    input_tokens: z.number(),
    output_tokens: z.number(),
    cache_read_input_tokens: z.number().nullish(),
    cache_creation_input_tokens: z.number().nullish(),
  }),
  input_transformations: z.array(z.looseObject({ type: z.string(), path: z.string().optional(), reason: z.string().optional() })).nullish(),
});

/** What one call's fetch wrapper saw: attempts made and whether the last one got a 2xx. */
interface AttemptLog {
  attempts: number;
  /** The next attempt's retry was said already, with its wait (a 429 with retry-after). */
  retrySaid?: boolean;
  /** Called on every byte chunk of an answer's body (pings included): the stall watch's clock. */
  onBytes?: () => void;
  lastFailure: string | undefined;
  lastResponseOk: boolean;
}

export function createAnthropicProvider(options: AnthropicProviderOptions): ModelProvider {
  const secrets = [options.apiKey];
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  return {
    name: 'anthropic',
    async complete(request, onEvent) {
      if (options.apiKey.trim() === '') throw new ModelError('Anthropic API auth: no API key was given', 'auth');
      const log: AttemptLog = { attempts: 0, lastFailure: undefined, lastResponseOk: false };
      const emit = (event: ModelEvent) => safeEmit(onEvent, event);
      const client = new Anthropic({
        apiKey: options.apiKey,
        ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
        maxRetries,
        timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        fetch: observingFetch(options.fetch ?? globalThis.fetch, { log, emit, secrets, maxRetries }),
        logLevel: 'off',
      });
      for (let streamRetry = 0; ; streamRetry += 1) {
        try {
          const message = await callOnce(client, request, options, emit, log);
          return toModelResponse(message);
        } catch (error) {
          const aborted = request.signal?.aborted === true;
          const mapped = toModelError(error, secrets, aborted);
          // The SDK does not retry a stream that broke after its headers; the call has no side
          // effect, so asking again is safe.
          const cutMidStream = log.lastResponseOk && isTransient(mapped);
          if (!cutMidStream || streamRetry >= maxRetries) throw mapped;
          log.lastFailure = mapped.message;
          await sleep((options.streamRetryDelayMs ?? 500) * 2 ** streamRetry, request.signal, secrets);
        }
      }
    },
  };
}

function isTransient(error: ModelError): boolean {
  // invalid_response included: a stream that simply ends early is as transient as a reset one.
  return ['network', 'overloaded', 'server', 'rate_limit', 'invalid_response'].includes(error.kind);
}

function safeEmit(onEvent: ((event: ModelEvent) => void) | undefined, event: ModelEvent): void {
  try {
    onEvent?.(event);
  } catch {
    // Progress listeners must never break a model call.
  }
}

interface Observer {
  readonly log: AttemptLog;
  readonly emit: (event: ModelEvent) => void;
  readonly secrets: readonly string[];
  readonly maxRetries: number;
}

function observingFetch(base: FetchFunction, { log, emit, secrets, maxRetries }: Observer): FetchFunction {
  return async (input, init) => {
    log.attempts += 1;
    if (log.attempts > 1 && !log.retrySaid) emit({ type: 'retry', attempt: log.attempts, error: log.lastFailure ?? 'unknown failure' });
    log.retrySaid = false;
    log.lastResponseOk = false;
    try {
      const response = await base(input, init);
      log.lastResponseOk = response.ok;
      log.lastFailure = response.ok ? undefined : `HTTP ${response.status}`;
      const waitMs = response.status === 429 && log.attempts <= maxRetries ? retryAfterMs(response.headers) : undefined;
      if (waitMs !== undefined) {
        // Said when the wait starts, not when it ends: the SDK sleeps for what the header asks.
        emit({ type: 'retry', attempt: log.attempts + 1, error: rateLimitedWords(waitMs), waitMs });
        log.retrySaid = true;
      }
      return response.ok ? touching(response, () => log.onBytes?.()) : response;
    } catch (error) {
      log.lastFailure = scrubSecrets(errorText(error), secrets);
      throw error;
    }
  };
}

/** The same answer, its body calling `touch` on every chunk as it arrives. */
function touching(response: Response, touch: () => void): Response {
  if (response.body === null) return response;
  const watched = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        touch();
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(watched, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The wait a 429 asks for, read as the SDK reads it (retry-after-ms, then retry-after in seconds or a date). */
function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (ms > 0) return ms;
  const after = headers.get('retry-after');
  if (after === null) return undefined;
  const seconds = Number.parseFloat(after);
  const wait = Number.isNaN(seconds) ? Date.parse(after) - Date.now() : seconds * 1000;
  return wait > 0 && wait <= 2 ** 31 - 1 ? wait : undefined;
}

/** "rate limited, retrying in 20 s" (under a second, in ms). */
export function rateLimitedWords(waitMs: number): string {
  const wait = waitMs < 1000 ? `${Math.round(waitMs)} ms` : `${Math.round(waitMs / 100) / 10} s`;
  return `rate limited, retrying in ${wait}`;
}

async function callOnce(
  client: Anthropic,
  request: ModelRequest,
  options: AnthropicProviderOptions,
  emit: (event: ModelEvent) => void,
  log: AttemptLog,
): Promise<unknown> {
  const params = toParams(request, options.model) as unknown as CreateParams;
  const requestOptions = request.signal ? { signal: request.signal } : {};
  if (options.streaming === false)
    return client.messages.create({ ...params, stream: false } as Anthropic.MessageCreateParamsNonStreaming, requestOptions);
  const stream = client.messages.stream(params, requestOptions);
  stream.on('text', (delta) => emit({ type: 'text', text: delta }));
  // The newest models write their words between tool calls inside thinking blocks ("What's new in
  // Claude Sonnet 5.5"): streamed as thinking, each block's words ending their own line.
  const thinkingWithText = new Set<number>();
  stream.on('streamEvent', (event) => {
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      emit({ type: 'tool_use_start', name: event.content_block.name, id: event.content_block.id });
    } else if (event.type === 'content_block_delta' && event.delta.type === 'thinking_delta' && event.delta.thinking !== '') {
      thinkingWithText.add(event.index);
      emit({ type: 'thinking', text: event.delta.thinking });
    } else if (event.type === 'content_block_stop' && thinkingWithText.delete(event.index)) {
      emit({ type: 'thinking', text: '\n' });
    }
  });
  const idle = watchIdle(stream, log, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  try {
    return await stream.finalMessage();
  } catch (error) {
    if (idle.stalled()) throw new ModelError(`Anthropic API network: the stream sent nothing for ${idle.seconds} s`, 'network');
    throw error;
  } finally {
    idle.stop();
  }
}

type MessageStream = ReturnType<Anthropic['messages']['stream']>;

/** Cuts a stream that stops sending without closing: `idleMs` after its last bytes (a ping counts) or its headers. */
function watchIdle(stream: MessageStream, log: AttemptLog, idleMs: number): { stalled: () => boolean; stop: () => void; seconds: number } {
  let stalled = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => clearTimeout(timer);
  const arm = () => {
    stop();
    timer = setTimeout(() => {
      stalled = true;
      stream.abort();
    }, idleMs);
  };
  stream.on('connect', arm);
  log.onBytes = () => timer !== undefined && arm();
  const stopAll = () => {
    stop();
    log.onBytes = undefined;
  };
  return { stalled: () => stalled, stop: stopAll, seconds: Math.round(idleMs / 100) / 10 };
}

type CreateParams = Parameters<Anthropic['messages']['stream']>[0];

/** The Messages API body of a request, as sent (also what test doubles check against the API's rules). */
export function toParams(request: ModelRequest, defaultModel?: string): Record<string, unknown> {
  // Our message and tool shapes are the API's own (validated by zod where they are built).
  const cached = request.cache === false ? undefined : withCacheBreakpoints(request.tools, request.system, request.messages);
  const params = {
    model: request.model || defaultModel || DEFAULT_MODEL,
    max_tokens: request.maxTokens,
    messages: cached?.messages ?? request.messages,
    ...(request.system !== undefined && request.system !== '' ? { system: cached?.system ?? request.system } : {}),
    ...(request.tools.length > 0 ? { tools: cached?.tools ?? request.tools } : {}),
    ...(request.thinking !== undefined ? { thinking: request.thinking } : {}),
  };
  return params;
}

/** Copies the SDK's message into plain data (its tool inputs can be lazy getters) and checks it. */
function toModelResponse(message: unknown): ModelResponse {
  const plain: unknown = JSON.parse(JSON.stringify(message));
  const parsed = ApiMessage.safeParse(plain);
  if (!parsed.success) throw new ModelError(`Anthropic API invalid_response: ${parsed.error.message}`, 'invalid_response');
  const { id, model, content, stop_reason, usage, input_transformations } = parsed.data;
  if (stop_reason === null) throw new ModelError('Anthropic API invalid_response: the message has no stop_reason', 'invalid_response');
  return {
    id,
    model,
    content,
    stopReason: stop_reason,
    usage: {
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      ...(usage.cache_read_input_tokens != null ? { cacheReadInputTokens: usage.cache_read_input_tokens } : {}),
      ...(usage.cache_creation_input_tokens != null ? { cacheCreationInputTokens: usage.cache_creation_input_tokens } : {}),
    },
    ...(input_transformations
      ? {
          inputTransformations: input_transformations.map(({ type, path, reason }) => ({
            type,
            ...(path !== undefined ? { path } : {}),
            ...(reason !== undefined ? { reason } : {}),
          })),
        }
      : {}),
  };
}

function sleep(ms: number, signal: AbortSignal | undefined, secrets: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(toModelError(new Error('aborted'), secrets, true));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    if (signal?.aborted) return abort();
    signal?.addEventListener('abort', abort, { once: true });
  });
}
