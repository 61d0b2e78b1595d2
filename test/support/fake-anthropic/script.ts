import type * as http from 'node:http';
import { z } from 'zod';
import { signThinking } from './cache';

// The script a fake Anthropic server plays: a queue of responses and faults, one per request.

export const ScriptTextBlock = z.object({ type: z.literal('text'), text: z.string() });
export const ScriptToolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
  /**
   * Raw JSON text streamed for the input instead of JSON.stringify(input): lets a script cut a
   * tool_use mid-JSON, as the real API does when max_tokens is hit.
   */
  rawInputJson: z.string().optional(),
});
/** A thinking block; the server signs it (signature given here only to send a wrong one). */
export const ScriptThinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() });
/** A redacted thinking block: its `data` is the opaque payload (and what the fake keys it by). */
export const ScriptRedactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string().min(1) });
export const ScriptBlock = z.union([ScriptTextBlock, ScriptToolUseBlock, ScriptThinkingBlock, ScriptRedactedThinkingBlock]);

export const ResponseStep = z.object({
  id: z.string().optional(),
  model: z.string().optional(),
  content: z.array(ScriptBlock),
  stop_reason: z.string().default('end_turn'),
  usage: z.object({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }).optional(),
  /** Pause between streamed events, to let a test act mid-stream. */
  eventDelayMs: z.number().nonnegative().optional(),
  /** The text_delta pieces of the first text block, as given (default: the text in two pieces). */
  textDeltas: z.array(z.string().min(1)).optional(),
  /**
   * Streams only the first `events` events, then says nothing for `ms` and drops the connection:
   * an answer cut for certain while a test acts (a window reload, a kill) mid-stream.
   */
  holdAfterEvents: z.object({ events: z.number().int().nonnegative(), ms: z.number().nonnegative() }).optional(),
  /** After `events` events, only pings every `everyMs` for `ms` (a long silent think), then the rest. */
  pingsAfterEvents: z
    .object({ events: z.number().int().nonnegative(), ms: z.number().nonnegative(), everyMs: z.number().positive() })
    .optional(),
  /** What the API changed in the request before the model saw it (blocks it dropped), as the answer lists it. */
  input_transformations: z.array(z.record(z.string(), z.unknown())).optional(),
});

export const StatusFault = z.object({
  fault: z.literal('status'),
  status: z.number().int().min(400).max(599),
  retryAfterSeconds: z.number().nonnegative().optional(),
  retryAfterMs: z.number().nonnegative().optional(),
  message: z.string().optional(),
});
/** Destroys the connection: before any byte by default, or after `afterEvents` streamed events. */
export const ResetFault = z.object({ fault: z.literal('reset'), afterEvents: z.number().int().nonnegative().optional() });
/** Accepts the request and says nothing for `ms`, then drops the connection. */
export const StallFault = z.object({ fault: z.literal('stall'), ms: z.number().nonnegative() });

/** Answers 200 and starts streaming, then sends an SSE `error` event (the API does this when overloaded mid-stream). */
export const StreamErrorFault = z.object({
  fault: z.literal('stream_error'),
  errorType: z.string().default('overloaded_error'),
  afterEvents: z.number().int().nonnegative().default(1),
});

export const Step = z.union([StatusFault, ResetFault, StallFault, StreamErrorFault, ResponseStep]);
export const Script = z.array(Step);

export type ScriptBlock = z.infer<typeof ScriptBlock>;
export type ResponseStep = z.input<typeof ResponseStep>;
export type StatusFault = z.infer<typeof StatusFault>;
export type ResetFault = z.infer<typeof ResetFault>;
export type StallFault = z.infer<typeof StallFault>;
export type StreamErrorFault = z.input<typeof StreamErrorFault>;
export type FaultStep = StatusFault | ResetFault | StallFault | StreamErrorFault;
export type Step = ResponseStep | FaultStep;

export function isFault(step: Step): step is FaultStep {
  return 'fault' in step;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export function errorTypeOf(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** A block as the API's plain JSON answer gives it. */
export function plainBlock(block: ScriptBlock): Record<string, unknown> {
  if (block.type === 'text') return { type: 'text', text: block.text };
  if (block.type === 'redacted_thinking') return { type: 'redacted_thinking', data: block.data };
  if (block.type === 'thinking')
    return { type: 'thinking', thinking: block.thinking, signature: block.signature ?? signThinking(block.thinking) };
  return {
    type: 'tool_use',
    id: block.id,
    name: block.name,
    input: block.rawInputJson === undefined ? block.input : parseOrEmpty(block.rawInputJson),
  };
}

function parseOrEmpty(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return {};
  }
}

export function splitInto(text: string, parts: number): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

/** Unref'd: a stall still pending when a test ends must not keep the process alive. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Only pings for a while, as the API sends while the model thinks without streaming words. */
export async function pingFor(res: http.ServerResponse, { ms, everyMs }: { ms: number; everyMs: number }): Promise<void> {
  for (let waited = 0; waited < ms && !res.destroyed; waited += everyMs) {
    await sleep(everyMs);
    res.write(`event: ping\ndata: ${JSON.stringify({ type: 'ping' })}\n\n`);
  }
}
