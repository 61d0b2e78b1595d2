import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PromptCache, signThinking, tokensOfText, type CacheUsage } from './cache';
import { sendModels } from './models-route';
import { preservedThinking, ThinkingLedger } from './preserved-thinking';
import { validateRequest, type RuleBreach } from './rules';
import {
  errorTypeOf,
  isFault,
  pingFor,
  plainBlock,
  ResponseStep,
  sleep,
  splitInto,
  StreamErrorFault,
  type ScriptBlock,
  type StatusFault,
  type Step,
} from './script';

export type { Step, ResponseStep, FaultStep, ScriptBlock } from './script';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Lower-cased header names; credentials (x-api-key, authorization) are kept as sent. */
  readonly headers: Readonly<Record<string, string>>;
  /** The credential as sent: `x-api-key`, or the token of `authorization: Bearer` (this SDK's way). */
  readonly apiKeySeen: string | undefined;
  /** Parsed JSON body (undefined when the body was not JSON). */
  readonly body: unknown;
}

export type Responder = (request: RecordedRequest, index: number) => Step;
export type ScriptEntry = Step | Responder;

export interface FakeAnthropic {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Usage reported for each answered message request, in order (promptCaching only). */
  readonly usages: MeasuredUsage[];
  /** Every request refused by the Messages API rules (rules.ts), with the request's index. */
  readonly refused: (RuleBreach & { readonly index: number })[];
  /** Each streamed text_delta and when (Date.now()) its write was handed to the socket. */
  readonly textSent: { readonly text: string; readonly at: number }[];
  /** The thinking blocks it produced on models with preserved thinking (signatures and prefixes). */
  readonly ledger: ThinkingLedger;
  push(...steps: ScriptEntry[]): void;
  close(): Promise<void>;
}

export interface FakeAnthropicOptions {
  readonly port?: number;
  /**
   * Count input tokens from the request and cache them as the API does (cache.ts): usage then
   * reports input, cache read and cache write tokens of each request; output tokens come from
   * the step's usage, else from its content.
   */
  readonly promptCaching?: boolean;
  /** What GET /v1/models lists (one page per `limit`). */
  readonly models?: readonly Record<string, unknown>[];
  /** The context window the "prompt is too long" rule checks; defaults to the model table's. */
  readonly contextWindow?: number;
  /**
   * Skip the Messages API rules (rules.ts). Only for a test whose point is what the product
   * does with a reply to a request the API would refuse; it must say why in one line.
   */
  readonly lenient?: true;
  /**
   * Answer requests to the models with preserved thinking (the default model's family) in their
   * shape: signed thinking blocks, the words between tool calls inside them (preserved-thinking.ts).
   */
  readonly defaultModelShape?: boolean;
}

/** What the server measured of one answered request (with promptCaching). */
export interface MeasuredUsage extends CacheUsage {
  readonly output_tokens: number;
}

/**
 * A loopback server speaking the Anthropic Messages API (plain JSON and SSE streaming) that
 * plays a script. A function as `script` answers every request; an array is a queue whose
 * entries may themselves be functions. An exhausted queue answers 400 so a test fails loudly.
 */
export async function startFakeAnthropic(
  script: readonly ScriptEntry[] | Responder = [],
  options: FakeAnthropicOptions = {},
): Promise<FakeAnthropic> {
  const queue: ScriptEntry[] = typeof script === 'function' ? [] : [...script];
  const fallback: Responder | undefined = typeof script === 'function' ? script : undefined;
  const requests: RecordedRequest[] = [];
  const usages: MeasuredUsage[] = [];
  const refused: (RuleBreach & { index: number })[] = [];
  const textSent: { text: string; at: number }[] = [];
  const cache = options.promptCaching ? new PromptCache() : undefined;
  const ledger = new ThinkingLedger();
  let messageCounter = 0;

  const server = http.createServer((req, res) => {
    void readBody(req).then((raw) => {
      const recorded = recordRequest(req, raw);
      const index = requests.length;
      requests.push(recorded);
      textSentOf.set(recorded, textSent);
      if (req.method === 'GET' && recorded.path === '/v1/models') return sendModels(res, req.url ?? '', options.models ?? []);
      if (req.method !== 'POST' || recorded.path !== '/v1/messages') {
        return sendError(res, { fault: 'status', status: 404, message: `fake-anthropic: no route ${req.method} ${recorded.path}` });
      }
      if (recorded.body === undefined) {
        return sendError(res, { fault: 'status', status: 400, message: 'fake-anthropic: body is not JSON' });
      }
      const broken = options.lenient
        ? null
        : validateRequest(recorded.body, {
            ...windowOf(options),
            ledger,
            ...(recorded.apiKeySeen !== undefined ? { account: recorded.apiKeySeen } : {}),
          });
      if (broken) {
        refused.push({ ...broken, index });
        return sendError(res, { fault: 'status', status: broken.status, message: broken.message });
      }
      const step = nextStep(queue, fallback, recorded, index);
      if (step === undefined) {
        return sendError(res, { fault: 'status', status: 400, message: `fake-anthropic: script exhausted at request ${index}` });
      }
      messageCounter += 1;
      const shaped = isFault(step)
        ? step
        : preservedThinking(step, recorded.body, ledger, options.defaultModelShape === true, messageCounter, recorded.apiKeySeen);
      const measured = cache && !isFault(shaped) ? measure(cache, ResponseStep.parse(shaped), recorded) : undefined;
      if (measured) usages.push(measured);
      return answer(req, res, shaped, recorded, `msg_fake_${messageCounter}`, measured);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    usages,
    refused,
    textSent,
    ledger,
    push: (...steps) => void queue.push(...steps),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function windowOf(options: FakeAnthropicOptions): { contextWindow?: number } {
  return options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow };
}

function nextStep(queue: ScriptEntry[], fallback: Responder | undefined, request: RecordedRequest, index: number): Step | undefined {
  const entry = queue.shift() ?? fallback;
  if (entry === undefined) return undefined;
  return typeof entry === 'function' ? entry(request, index) : entry;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function recordRequest(req: http.IncomingMessage, raw: string): RecordedRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = undefined;
  }
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  return { method: req.method ?? 'GET', path, headers, apiKeySeen: credentialOf(headers), body };
}

function credentialOf(headers: Readonly<Record<string, string>>): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers['authorization'] ?? '');
  return headers['x-api-key'] ?? bearer?.[1];
}

async function answer(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  step: Step,
  request: RecordedRequest,
  id: string,
  measured?: MeasuredUsage,
): Promise<void> {
  if (!isFault(step)) {
    const parsed = withUsage(ResponseStep.parse(step), measured);
    if (parsed.holdAfterEvents === undefined || !wantsStream(request)) return sendMessage(res, parsed, request, id);
    await streamMessage(res, parsed, request, id, parsed.holdAfterEvents.events);
    await sleep(parsed.holdAfterEvents.ms);
    return resetSocket(req);
  }
  switch (step.fault) {
    case 'status':
      return sendError(res, step);
    case 'stall':
      await sleep(step.ms);
      return resetSocket(req);
    case 'stream_error': {
      const { errorType, afterEvents } = StreamErrorFault.parse(step);
      const partial = { content: [{ type: 'text' as const, text: 'partial response before an error' }], stop_reason: 'end_turn' };
      await streamMessage(res, partial, request, id, afterEvents);
      if (res.writableEnded || res.destroyed) return;
      const error = { type: 'error', error: { type: errorType, message: `fake ${errorType} mid-stream` } };
      res.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
      return;
    }
    case 'reset': {
      const afterEvents = step.afterEvents;
      if (afterEvents === undefined || !wantsStream(request)) return resetSocket(req);
      const partial = { content: [{ type: 'text' as const, text: 'partial response before a reset' }], stop_reason: 'end_turn' };
      await streamMessage(res, partial, request, id, afterEvents);
      // Let the client receive what was written, so the cut lands mid-stream, not before headers.
      await sleep(20);
      return resetSocket(req);
    }
  }
}

function resetSocket(req: http.IncomingMessage): void {
  const socket = req.socket;
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

function sendError(res: http.ServerResponse, fault: StatusFault): void {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'request-id': `req_fake_${Date.now()}` };
  // A short explicit delay keeps the SDK's retry backoff fast in tests.
  if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
  if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
  if (fault.retryAfterMs === undefined && fault.retryAfterSeconds === undefined) headers['retry-after-ms'] = '5';
  const type = errorTypeOf(fault.status);
  const body = { type: 'error', error: { type, message: fault.message ?? `fake ${type} (${fault.status})` } };
  res.writeHead(fault.status, headers);
  res.end(JSON.stringify(body));
}

type ParsedResponse = ReturnType<typeof ResponseStep.parse>;

function wantsStream(request: RecordedRequest): boolean {
  return typeof request.body === 'object' && request.body !== null && (request.body as { stream?: unknown }).stream === true;
}

function modelOf(step: ParsedResponse, request: RecordedRequest): string {
  const requested = (request.body as { model?: unknown } | undefined)?.model;
  return step.model ?? (typeof requested === 'string' ? requested : 'claude-fake');
}

function usageOf(step: ParsedResponse): MeasuredUsage {
  const usage = step.usage ?? { input_tokens: 100, output_tokens: 20 };
  return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage };
}

function measure(cache: PromptCache, step: ParsedResponse, request: RecordedRequest): MeasuredUsage {
  const output = step.usage?.output_tokens ?? tokensOfText(JSON.stringify(step.content));
  return { ...cache.use(request.body), output_tokens: output };
}

function withUsage(step: ParsedResponse, measured: MeasuredUsage | undefined): ParsedResponse {
  return measured ? { ...step, usage: measured } : step;
}

async function sendMessage(res: http.ServerResponse, step: ParsedResponse, request: RecordedRequest, id: string): Promise<void> {
  if (wantsStream(request)) return streamMessage(res, step, request, id, Number.POSITIVE_INFINITY);
  const usage = usageOf(step);
  const message = {
    id: step.id ?? id,
    type: 'message',
    role: 'assistant',
    model: modelOf(step, request),
    content: step.content.map(plainBlock),
    stop_reason: step.stop_reason,
    stop_sequence: null,
    usage,
    ...(step.input_transformations ? { input_transformations: step.input_transformations } : {}),
  };
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_fake_${id}` });
  res.end(JSON.stringify(message));
}

/** Where the streamed text_delta writes of a request are logged (its server's textSent). */
const textSentOf = new WeakMap<RecordedRequest, { text: string; at: number }[]>();

/** Writes SSE events; stops after `limit` events (a reset fault cuts the stream there). */
async function streamMessage(
  res: http.ServerResponse,
  step: ParsedResponse,
  request: RecordedRequest,
  id: string,
  limit: number,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_fake_${id}` });
  const events = streamEvents(step, request, id);
  let sent = 0;
  for (const event of events) {
    if (sent >= limit || res.destroyed) return;
    if (sent > 0 && step.eventDelayMs) await sleep(step.eventDelayMs);
    if (sent === step.pingsAfterEvents?.events) await pingFor(res, step.pingsAfterEvents);
    await new Promise<void>((resolve) => res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`, () => resolve()));
    const delta = event['delta'] as { type?: string; text?: string } | undefined;
    if (delta?.type === 'text_delta') textSentOf.get(request)?.push({ text: delta.text ?? '', at: Date.now() });
    sent += 1;
  }
  res.end();
}

type StreamEvent = { type: string } & Record<string, unknown>;

function streamEvents(step: ParsedResponse, request: RecordedRequest, id: string): StreamEvent[] {
  const usage = usageOf(step);
  const events: StreamEvent[] = [
    {
      type: 'message_start',
      message: {
        id: step.id ?? id,
        type: 'message',
        role: 'assistant',
        model: modelOf(step, request),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
        ...(step.input_transformations ? { input_transformations: step.input_transformations } : {}),
      },
    },
    { type: 'ping' },
  ];
  const firstText = step.content.findIndex((block) => block.type === 'text');
  step.content.forEach((block, index) => events.push(...blockEvents(block, index, index === firstText ? step.textDeltas : undefined)));
  events.push({
    type: 'message_delta',
    delta: { stop_reason: step.stop_reason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  events.push({ type: 'message_stop' });
  return events;
}

function thinkingEvents(block: Extract<ScriptBlock, { type: 'thinking' }>, index: number): StreamEvent[] {
  return [
    { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
    ...splitInto(block.thinking, 2).map((thinking) => ({
      type: 'content_block_delta',
      index,
      delta: { type: 'thinking_delta', thinking },
    })),
    { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature ?? signThinking(block.thinking) } },
    { type: 'content_block_stop', index },
  ];
}

function blockEvents(block: ScriptBlock, index: number, deltas?: readonly string[]): StreamEvent[] {
  if (block.type === 'thinking') return thinkingEvents(block, index);
  if (block.type === 'redacted_thinking')
    return [
      { type: 'content_block_start', index, content_block: plainBlock(block) },
      { type: 'content_block_stop', index },
    ];
  if (block.type === 'text') {
    return [
      { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      ...(deltas ?? splitInto(block.text, 2)).map((text) => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } })),
      { type: 'content_block_stop', index },
    ];
  }
  const json = block.rawInputJson ?? JSON.stringify(block.input ?? {});
  // The real API opens with an empty partial_json chunk, then splits the JSON anywhere.
  const chunks = ['', ...splitInto(json, 3)];
  return [
    { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } },
    ...chunks.map((partial_json) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } })),
    { type: 'content_block_stop', index },
  ];
}
