import { modelFacts } from '../../../src/core/model/models';
import { requestTokens, signThinking } from './cache';
import { checkThinkingSetting, type ThinkingLedger } from './preserved-thinking';

// The request rules of the Messages API that the fake enforces, in one place. Each breach is
// answered as the API answers it: 400, `invalid_request_error`, and a message worded as the
// API words it (taken from the API's own replies quoted in public bug reports), so a test double
// never accepts a history the real service would refuse. Where the API is more lenient than one
// would guess (an empty tool_result, a whitespace text beside a tool_use, an empty system string)
// the fake is exactly as lenient: stricter would fail correct products.

export interface RuleBreach {
  readonly status: 400;
  readonly type: 'invalid_request_error';
  /** Which rule was broken (the table test and the random walk count breaches by rule). */
  readonly rule: RuleName;
  readonly message: string;
}

export type RuleName =
  | 'shape'
  | 'tool_result_after_tool_use'
  | 'tool_result_answers_tool_use'
  | 'tool_result_first'
  | 'non_empty_content'
  | 'non_empty_text'
  | 'tool_name'
  | 'tool_schema'
  | 'tool_use_id_unique'
  | 'cache_breakpoints'
  | 'thinking_signature'
  | 'thinking_kept'
  | 'thinking_budget'
  | 'thinking_prefix'
  | 'thinking_setting'
  | 'tool_choice'
  | 'context_window';

export interface RuleOptions {
  /** The model's context window in tokens; defaults to the model table's, else 200,000. */
  readonly contextWindow?: number;
  /** The thinking blocks the fake produced: their signatures are valid, and the prefix check runs on them. */
  readonly ledger?: ThinkingLedger;
  /** The key the request came with: thinking of some models is bound to the account that produced it. */
  readonly account?: string;
}

type Json = Record<string, unknown>;
interface Message {
  readonly role: string;
  readonly blocks: readonly Json[];
  readonly raw: unknown;
}

export const DEFAULT_CONTEXT_WINDOW = 200_000;
export const MAX_CACHE_BREAKPOINTS = 4;
export const MIN_THINKING_BUDGET = 1024;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const THINKING_DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

function breach(rule: RuleName, message: string): RuleBreach {
  return { status: 400, type: 'invalid_request_error', rule, message };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function blocksOf(content: unknown): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isObject) : [];
}

/** Null when the Messages API would accept the request body, else the 400 it would answer. */
export function validateRequest(body: unknown, options: RuleOptions = {}): RuleBreach | null {
  if (!isObject(body)) return breach('shape', 'request body: Input should be a valid dictionary');
  if (!Array.isArray(body['messages'])) return breach('shape', 'messages: Field required');
  if (typeof body['max_tokens'] !== 'number') return breach('shape', 'max_tokens: Field required');
  const messages: Message[] = (body['messages'] as unknown[]).map((m) => {
    const message = isObject(m) ? m : {};
    return { role: String(message['role']), blocks: blocksOf(message['content']), raw: message['content'] };
  });
  return (
    checkTools(body['tools']) ??
    checkContent(messages) ??
    checkSystem(body['system']) ??
    checkToolPairs(messages) ??
    checkToolUseIds(messages) ??
    checkCacheBreakpoints(body, messages) ??
    checkThinking(body, messages, options.ledger) ??
    checkThinkingSetting(body) ??
    prefixBreach(body, options) ??
    checkContextWindow(body, options)
  );
}

function prefixBreach(body: Json, options: RuleOptions): RuleBreach | null {
  return options.ledger ? options.ledger.check(body, options.account).breach : null;
}

function checkTools(tools: unknown): RuleBreach | null {
  if (tools === undefined) return null;
  if (!Array.isArray(tools)) return breach('shape', 'tools: Input should be a valid list');
  const seen = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    if (!isObject(tool)) return breach('shape', `tools.${i}: Input should be a valid dictionary`);
    if (tool['type'] !== undefined && tool['type'] !== 'custom') continue; // server tools have their own shapes
    const name = tool['name'];
    if (typeof name !== 'string' || !TOOL_NAME.test(name))
      return breach('tool_name', `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
    if (seen.has(name)) return breach('tool_name', 'tools: Tool names must be unique.');
    seen.add(name);
    const schema = tool['input_schema'];
    if (!isObject(schema)) return breach('tool_schema', `tools.${i}.custom.input_schema: Field required`);
    if (schema['type'] !== 'object') return breach('tool_schema', `tools.${i}.custom.input_schema.type: Input should be 'object'`);
  }
  return null;
}

/** Text blocks: "" is refused anywhere; whitespace only is refused when the message holds nothing else. */
function textBreach(where: string, blocks: readonly Json[]): RuleBreach | null {
  const texts = blocks.filter((b) => b['type'] === 'text');
  if (texts.some((b) => b['text'] === '')) return breach('non_empty_text', `${where}: text content blocks must be non-empty`);
  const blank = (b: Json) => b['type'] === 'text' && typeof b['text'] === 'string' && b['text'].trim() === '';
  if (blocks.length > 0 && blocks.every(blank))
    return breach('non_empty_text', `${where}: text content blocks must contain non-whitespace text`);
  return null;
}

function checkContent(messages: readonly Message[]): RuleBreach | null {
  for (const [i, message] of messages.entries()) {
    if (message.role !== 'user' && message.role !== 'assistant')
      return breach('shape', `messages.${i}.role: Input should be 'user' or 'assistant'`);
    const finalAssistant = i === messages.length - 1 && message.role === 'assistant';
    if (message.blocks.length === 0 && !finalAssistant)
      return breach(
        'non_empty_content',
        `messages.${i}: all messages must have non-empty content except for the optional final assistant message`,
      );
    if (message.raw === '' && finalAssistant) continue;
    const text = textBreach('messages', message.blocks);
    if (text) return text;
  }
  return null;
}

function checkSystem(system: unknown): RuleBreach | null {
  if (system === undefined || system === '') return null;
  if (typeof system === 'string') return textBreach('system', blocksOf(system));
  if (!Array.isArray(system)) return breach('shape', 'system: Input should be a valid string or list');
  return textBreach('system', system.filter(isObject));
}

const toolUseIds = (blocks: readonly Json[]) => blocks.filter((b) => b['type'] === 'tool_use').map((b) => String(b['id']));

function checkToolPairs(messages: readonly Message[]): RuleBreach | null {
  for (const [i, message] of messages.entries()) {
    const asked = i > 0 && messages[i - 1]!.role === 'assistant' ? toolUseIds(messages[i - 1]!.blocks) : [];
    if (message.role === 'user') {
      const firstOther = message.blocks.findIndex((b) => b['type'] !== 'tool_result');
      const lateResult = firstOther >= 0 && message.blocks.slice(firstOther).some((b) => b['type'] === 'tool_result');
      if (lateResult)
        return breach(
          'tool_result_first',
          `messages.${i}: Did not find ${asked.length} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`,
        );
      for (const [j, block] of message.blocks.entries()) {
        if (block['type'] === 'tool_result' && !asked.includes(String(block['tool_use_id'])))
          return breach(
            'tool_result_answers_tool_use',
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block['tool_use_id'])}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
      }
    }
    const missing = unanswered(message, messages[i + 1]);
    if (missing.length > 0)
      return breach(
        'tool_result_after_tool_use',
        `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
  }
  return null;
}

/** The tool_use ids of an assistant message that the next message does not answer. */
function unanswered(message: Message, next: Message | undefined): string[] {
  if (message.role !== 'assistant') return [];
  const answered =
    next?.role === 'user'
      ? new Set(next.blocks.filter((b) => b['type'] === 'tool_result').map((b) => String(b['tool_use_id'])))
      : new Set();
  return toolUseIds(message.blocks).filter((id) => !answered.has(id));
}

function checkToolUseIds(messages: readonly Message[]): RuleBreach | null {
  const seen = new Set<string>();
  for (const [i, message] of messages.entries()) {
    for (const [j, block] of message.blocks.entries()) {
      if (block['type'] !== 'tool_use') continue;
      const id = String(block['id']);
      if (seen.has(id)) return breach('tool_use_id_unique', `messages.${i}.content.${j}: \`tool_use\` ids must be unique`);
      seen.add(id);
    }
  }
  return null;
}

function checkCacheBreakpoints(body: Json, messages: readonly Message[]): RuleBreach | null {
  const marked = (blocks: readonly unknown[]) => blocks.filter((b) => isObject(b) && b['cache_control'] != null).length;
  const tools = Array.isArray(body['tools']) ? body['tools'] : [];
  const system = Array.isArray(body['system']) ? body['system'] : [];
  const found = marked(tools) + marked(system) + messages.reduce((sum, m) => sum + marked(m.blocks), 0);
  if (found > MAX_CACHE_BREAKPOINTS)
    return breach('cache_breakpoints', `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${found}.`);
  return null;
}

function checkThinking(body: Json, messages: readonly Message[], ledger: ThinkingLedger | undefined): RuleBreach | null {
  for (const [i, message] of messages.entries()) {
    if (message.role !== 'assistant') continue;
    for (const [j, block] of message.blocks.entries()) {
      if (block['type'] !== 'thinking' || ledger?.knows(block)) continue;
      if (typeof block['thinking'] !== 'string' || block['signature'] !== signThinking(block['thinking']))
        return breach('thinking_signature', `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
    }
  }
  const thinking = body['thinking'];
  if (!isObject(thinking) || thinking['type'] !== 'enabled') return null;
  const budget = thinking['budget_tokens'];
  if (typeof budget !== 'number' || budget < MIN_THINKING_BUDGET)
    return breach('thinking_budget', `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`);
  if (budget >= (body['max_tokens'] as number))
    return breach(
      'thinking_budget',
      `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. Please consult our documentation at ${THINKING_DOCS}#max-tokens-and-context-window-size`,
    );
  return thinkingKept(messages);
}

/**
 * With thinking on, the assistant message whose tool calls the final user message answers must
 * start with its thinking block: the model's reasoning goes back with the tool results.
 */
function thinkingKept(messages: readonly Message[]): RuleBreach | null {
  const last = messages.length - 1;
  if (last < 1 || messages[last]!.role !== 'user' || messages[last]!.blocks[0]?.['type'] !== 'tool_result') return null;
  if (messages[last - 1]!.role !== 'assistant') return null;
  const first = messages[last - 1]!.blocks[0]?.['type'];
  if (first === 'thinking' || first === 'redacted_thinking') return null;
  return breach(
    'thinking_kept',
    `messages.${last - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at ${THINKING_DOCS}`,
  );
}

/** The prompt alone must fit the model's window (as on the API's newer models, max_tokens may reach past it). */
function checkContextWindow(body: Json, options: RuleOptions): RuleBreach | null {
  const model = typeof body['model'] === 'string' ? body['model'] : '';
  const window = options.contextWindow ?? modelFacts(model)?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const tokens = requestTokens(body);
  if (tokens > window) return breach('context_window', `prompt is too long: ${tokens} tokens > ${window} maximum`);
  return null;
}
