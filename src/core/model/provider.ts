import type { ContentBlock, MessageParam } from './messages';

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input (from the tool's zod schema). */
  readonly input_schema: Record<string, unknown>;
}

/**
 * Extended thinking as the Messages API takes it. `display: "summarized"` returns the thinking
 * text (the default on the newest models is "omitted": empty text); `between_tools` is the lowest
 * setting of the models that refuse `disabled` (no up-front thinking; the words written between
 * tool calls still come back as thinking text): "What's new in Claude Sonnet 5.5".
 */
export type ThinkingParam =
  | { readonly type: 'enabled'; readonly budget_tokens: number }
  | { readonly type: 'adaptive'; readonly display?: 'summarized' | 'omitted' }
  | { readonly type: 'between_tools' };

export interface ModelRequest {
  readonly model: string;
  readonly system?: string;
  readonly messages: readonly MessageParam[];
  readonly tools: readonly ToolSpec[];
  readonly maxTokens: number;
  readonly signal?: AbortSignal;
  /** Prompt-cache breakpoints on tools, system and the latest messages (default true). */
  readonly cache?: boolean;
  readonly thinking?: ThinkingParam;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'pause_turn' | 'stop_sequence' | (string & {});

export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadInputTokens?: number;
  readonly cacheCreationInputTokens?: number;
}

/** One change the API made to the request before the model saw it (a thinking block it left out, and why). */
export interface InputTransformation {
  readonly type: string;
  readonly path?: string;
  readonly reason?: string;
}

export interface ModelResponse {
  readonly id: string;
  readonly model: string;
  readonly content: readonly ContentBlock[];
  readonly stopReason: StopReason;
  readonly usage: Usage;
  /** The answer's `input_transformations` ("Preserved thinking"): blocks the API dropped or let through. */
  readonly inputTransformations?: readonly InputTransformation[];
}

/** Streaming progress, for status bars and logs; never needed for correctness. */
export type ModelEvent =
  | { readonly type: 'text'; readonly text: string }
  /** Thinking text as it streams: on the models with preserved thinking, the words written between tool calls. */
  | { readonly type: 'thinking'; readonly text: string }
  | { readonly type: 'tool_use_start'; readonly name: string; readonly id: string }
  /** `waitMs`: the wait a 429's retry-after asked for, said when the wait starts ("rate limited, retrying in 20 s"). */
  | { readonly type: 'retry'; readonly attempt: number; readonly error: string; readonly waitMs?: number };

export class ModelError extends Error {
  constructor(
    message: string,
    readonly kind: 'auth' | 'bad_request' | 'rate_limit' | 'overloaded' | 'server' | 'network' | 'aborted' | 'invalid_response',
    readonly status?: number,
    /** The API's own words for a refused request ("messages.1: `tool_use` ids were found ..."). */
    readonly apiMessage?: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest, onEvent?: (event: ModelEvent) => void): Promise<ModelResponse>;
}
