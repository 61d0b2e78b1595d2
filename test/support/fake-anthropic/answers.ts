import type { ResponseStep, Step } from './script';

// The answers the real Messages API gives besides a well-formed one, each a row naming the
// Anthropic page that documents it: a test scripts one by name (`answerShape`) and checks what the
// product does with it (test/unit/runtime/answers.test.ts), the fake plays it through the real
// SDK (test/unit/model/fake-answers.test.ts). Like the request rules (rules.ts), one table.

export type AnswerName =
  | 'empty_after_tool_results'
  | 'empty_first_turn'
  | 'refusal_with_text'
  | 'refusal_without_text'
  | 'max_tokens_cut_tool_call'
  | 'max_tokens_cut_text'
  | 'pause_turn'
  | 'stream_error_overloaded'
  | 'stream_error_api'
  | 'rate_limited_429'
  | 'overloaded_529'
  | 'server_error_500'
  | 'context_window_exceeded_text'
  | 'context_window_exceeded_tool_call'
  | 'connection_reset_mid_stream'
  | 'stream_stall'
  | 'auth_401'
  | 'permission_403'
  | 'request_too_large_413'
  | 'tool_call_unknown_tool'
  | 'tool_call_input_not_schema'
  | 'tool_calls_same_id'
  | 'thinking_omitted_words_between_tools'
  | 'redacted_thinking'
  | 'thinking_dropped_listed';

export interface AnswerPage {
  readonly title: string;
  readonly url: string;
}

export interface AnswerShape {
  readonly name: AnswerName;
  /** The Anthropic page that documents the answer. */
  readonly page: AnswerPage;
  /** When the API answers so, in short. */
  readonly when: string;
  /** Played as the answer to a request that ends with tool results (a tool call comes first). */
  readonly afterToolResults: boolean;
  readonly step: Step;
}

export const STOP_REASONS_PAGE: AnswerPage = {
  title: 'Handling stop reasons',
  url: 'https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons',
};
export const STREAMING_PAGE: AnswerPage = {
  title: 'Streaming Messages (error events)',
  url: 'https://platform.claude.com/docs/en/build-with-claude/streaming',
};
export const ERRORS_PAGE: AnswerPage = { title: 'Errors', url: 'https://platform.claude.com/docs/en/api/errors' };
export const SONNET_55_PAGE: AnswerPage = {
  title: "What's new in Claude Sonnet 5.5",
  url: 'https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5',
};
export const PRESERVED_THINKING_PAGE: AnswerPage = {
  title: 'Preserved thinking',
  url: 'https://platform.claude.com/docs/en/build-with-claude/preserved-thinking',
};
export const HANDLE_TOOL_CALLS_PAGE: AnswerPage = {
  title: 'Handle tool calls',
  url: 'https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls',
};
/** The stall after the answer began streaming: the product's own stream timeout decides (anthropic.ts). */
export const STALL_MS = 60_000;
export const RATE_LIMITS_PAGE: AnswerPage = { title: 'Rate limits', url: 'https://platform.claude.com/docs/en/api/rate-limits' };

/** The tool call a cut answer was writing; `rawInputJson` stops mid-JSON as max_tokens leaves it. */
const CUT_CALL = {
  type: 'tool_use',
  id: 'toolu_cut',
  name: 'write_file',
  input: {},
  rawInputJson: '{"path":"big.txt","content":"abc',
} as const;

const answer = (content: ResponseStep['content'], stop_reason: string): ResponseStep => ({
  content,
  stop_reason,
  usage: { input_tokens: 100, output_tokens: content.length === 0 ? 3 : 20 },
});

export const ANSWER_SHAPES: readonly AnswerShape[] = [
  {
    name: 'empty_after_tool_results',
    page: STOP_REASONS_PAGE,
    when: 'end_turn with no content (2-3 tokens), "particularly after tool results"',
    afterToolResults: true,
    step: answer([], 'end_turn'),
  },
  {
    name: 'empty_first_turn',
    page: STOP_REASONS_PAGE,
    when: 'end_turn with no content, to the first request of a run',
    afterToolResults: false,
    step: answer([], 'end_turn'),
  },
  {
    name: 'refusal_with_text',
    page: STOP_REASONS_PAGE,
    when: 'refusal: the model declined, after some words',
    afterToolResults: false,
    step: answer([{ type: 'text', text: 'I started to answer, but I' }], 'refusal'),
  },
  {
    name: 'refusal_without_text',
    page: STOP_REASONS_PAGE,
    when: 'refusal before any word',
    afterToolResults: true,
    step: answer([], 'refusal'),
  },
  {
    name: 'max_tokens_cut_tool_call',
    page: STOP_REASONS_PAGE,
    when: 'max_tokens in the middle of a tool call: its input JSON is cut',
    afterToolResults: false,
    step: answer([{ type: 'text', text: 'Writing the file.' }, CUT_CALL], 'max_tokens'),
  },
  {
    name: 'max_tokens_cut_text',
    page: STOP_REASONS_PAGE,
    when: 'max_tokens in the middle of a sentence',
    afterToolResults: true,
    step: answer([{ type: 'text', text: 'The answer is half' }], 'max_tokens'),
  },
  {
    name: 'pause_turn',
    page: STOP_REASONS_PAGE,
    when: 'pause_turn: a long turn paused; sending the answer back lets it go on',
    afterToolResults: false,
    step: answer([{ type: 'text', text: 'Still working on it.' }], 'pause_turn'),
  },
  {
    name: 'stream_error_overloaded',
    page: STREAMING_PAGE,
    when: 'HTTP 200, some events, then an `error` event of type overloaded_error',
    afterToolResults: true,
    step: { fault: 'stream_error', errorType: 'overloaded_error', afterEvents: 4 },
  },
  {
    name: 'stream_error_api',
    page: STREAMING_PAGE,
    when: 'HTTP 200, some events, then an `error` event of type api_error',
    afterToolResults: false,
    step: { fault: 'stream_error', errorType: 'api_error', afterEvents: 4 },
  },
  {
    name: 'rate_limited_429',
    page: RATE_LIMITS_PAGE,
    when: '429 rate_limit_error with a retry-after header (seconds to wait)',
    afterToolResults: true,
    step: { fault: 'status', status: 429, retryAfterSeconds: 1 },
  },
  {
    name: 'overloaded_529',
    page: ERRORS_PAGE,
    when: '529 overloaded_error: the API is temporarily overloaded',
    afterToolResults: false,
    step: { fault: 'status', status: 529, retryAfterMs: 5 },
  },
  {
    name: 'server_error_500',
    page: ERRORS_PAGE,
    when: '500 api_error: an unexpected error inside the API',
    afterToolResults: true,
    step: { fault: 'status', status: 500, retryAfterMs: 5 },
  },
  {
    name: 'context_window_exceeded_text',
    page: STOP_REASONS_PAGE,
    when: 'model_context_window_exceeded: the answer filled the context window; treat it as truncated',
    afterToolResults: true,
    step: answer([{ type: 'text', text: 'The summary of the files so far is' }], 'model_context_window_exceeded'),
  },
  {
    name: 'context_window_exceeded_tool_call',
    page: STOP_REASONS_PAGE,
    when: 'model_context_window_exceeded in the middle of a tool call: its input JSON is cut',
    afterToolResults: false,
    step: answer([{ type: 'text', text: 'Writing the file.' }, CUT_CALL], 'model_context_window_exceeded'),
  },
  {
    name: 'connection_reset_mid_stream',
    page: ERRORS_PAGE,
    when: 'the connection drops after some streamed events (networks may drop long connections: "Long requests")',
    afterToolResults: true,
    step: { fault: 'reset', afterEvents: 4 },
  },
  {
    name: 'stream_stall',
    page: ERRORS_PAGE,
    when: 'the stream stops sending without closing (an idle connection, "Long requests"): the product\'s own timeout decides',
    afterToolResults: false,
    step: { ...answer([{ type: 'text', text: 'never finished' }], 'end_turn'), holdAfterEvents: { events: 4, ms: STALL_MS } },
  },
  {
    name: 'auth_401',
    page: ERRORS_PAGE,
    when: '401 authentication_error: there is an issue with the API key',
    afterToolResults: true,
    step: { fault: 'status', status: 401 },
  },
  {
    name: 'permission_403',
    page: ERRORS_PAGE,
    when: '403 permission_error: the API key may not use the resource',
    afterToolResults: false,
    step: { fault: 'status', status: 403 },
  },
  {
    name: 'request_too_large_413',
    page: ERRORS_PAGE,
    when: '413 request_too_large: the request is over 32 MB (returned before it reaches the API)',
    afterToolResults: true,
    step: { fault: 'status', status: 413 },
  },
  {
    name: 'tool_call_unknown_tool',
    page: HANDLE_TOOL_CALLS_PAGE,
    when: 'a tool_use naming a tool that was not offered: answered with an is_error tool_result',
    afterToolResults: false,
    step: answer([{ type: 'tool_use', id: 'toolu_ghost', name: 'delete_everything', input: { path: 'a.txt' } }], 'tool_use'),
  },
  {
    name: 'tool_call_input_not_schema',
    page: HANDLE_TOOL_CALLS_PAGE,
    when: "a tool_use whose input does not match the tool's input_schema: answered with an is_error tool_result",
    afterToolResults: true,
    step: answer([{ type: 'tool_use', id: 'toolu_badinput', name: 'read_file', input: { path: 42, extra: true } }], 'tool_use'),
  },
  {
    name: 'tool_calls_same_id',
    page: HANDLE_TOOL_CALLS_PAGE,
    when: 'two tool_use blocks with one id in one answer (each id is meant to be unique)',
    afterToolResults: false,
    step: answer(
      [
        { type: 'tool_use', id: 'toolu_twice', name: 'read_file', input: { path: 'a.txt' } },
        { type: 'tool_use', id: 'toolu_twice', name: 'read_file', input: { path: 'b.txt' } },
      ],
      'tool_use',
    ),
  },
  // The default model's shape (the fake plays the whole of it with `defaultModelShape`, preserved-thinking.ts).
  {
    name: 'thinking_omitted_words_between_tools',
    page: SONNET_55_PAGE,
    when: 'display omitted (the default): signed thinking blocks with empty text; the words before a tool call in one of them',
    afterToolResults: false,
    step: answer(
      [
        { type: 'thinking', thinking: '' },
        { type: 'thinking', thinking: '' },
        { type: 'tool_use', id: 'toolu_words', name: 'read_file', input: { path: 'a.txt' } },
      ],
      'tool_use',
    ),
  },
  {
    name: 'redacted_thinking',
    page: PRESERVED_THINKING_PAGE,
    when: 'a redacted_thinking block (opaque data) before the answer; it goes back as it came',
    afterToolResults: true,
    step: answer(
      [
        { type: 'redacted_thinking', data: 'redacted-payload-1' },
        { type: 'text', text: 'Read it.' },
      ],
      'end_turn',
    ),
  },
  {
    name: 'thinking_dropped_listed',
    page: PRESERVED_THINKING_PAGE,
    when: 'blocks the API dropped (prefix mismatch under "drop_block", or a model that cannot read them) listed in input_transformations',
    afterToolResults: true,
    step: {
      ...answer([{ type: 'text', text: 'Going on without the dropped thinking.' }], 'end_turn'),
      input_transformations: [{ type: 'thinking_dropped', path: 'messages.1.content.0', reason: 'prefix_mismatch' }],
    },
  },
];

/** The step of an answer shape, by name. */
export function answerShape(name: AnswerName): Step {
  const row = ANSWER_SHAPES.find((shape) => shape.name === name);
  if (!row) throw new Error(`no answer shape ${name}`);
  return row.step;
}
