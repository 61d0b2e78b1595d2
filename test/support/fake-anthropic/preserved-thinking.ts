import { createHash } from 'node:crypto';
import type { RuleBreach } from './rules';
import { plainBlock, ResponseStep, type ScriptBlock } from './script';

// The default model's shape (Claude Sonnet 5.5) and the rules of preserved thinking, as
// Anthropic's pages give them:
// - "Prefix checks on thinking blocks"
//   https://platform.claude.com/docs/en/build-with-claude/preserved-thinking/prefix-checks
//   every thinking block sent back to the models it names is checked against its prefix (system,
//   tools, every earlier message); a change there, or a thinking block between others left out
//   or moved, fails the check.
// - "Preserved thinking" https://platform.claude.com/docs/en/build-with-claude/preserved-thinking
//   a failed check is a 400 by default (accounts created since 2026-08-31), or the blocks are
//   dropped when `thinking.block_binding.prefix_mismatch_behavior` is "drop_block"; the answer's
//   `input_transformations` then lists each dropped block. A block the model cannot read is
//   dropped without an error.
// - "What's new in Claude Sonnet 5.5"
//   https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5
//   adaptive thinking by default with `display` omitted (thinking blocks with empty text and a
//   signature); the words written between tool calls come back in thinking blocks; `thinking:
//   {type: "disabled"}` is a 400 pointing to `between_tools` (the lowest setting, which returns
//   those words as thinking text); `between_tools` at effort xhigh or max is a 400; a forced
//   `tool_choice` is a 400.
// The refusals' words for the prefix check are the API's (quoted on the page "Fix thinking blocks
// bound to a different conversation"); the others are the fake's, as the pages give no wording.

/** The models that run the prefix check (the prefix-check page's list). */
export const PREFIX_CHECK_MODELS: readonly string[] = [
  'claude-fable-5-2',
  'claude-mythos-5-2',
  'claude-fable-5-1',
  'claude-mythos-5-1',
  'claude-opus-5-5',
  'claude-sonnet-5-5',
  'claude-haiku-5-5',
];
/** The models that refuse `thinking: {type: "disabled"}` and a forced tool_choice (What's new in Claude Sonnet 5.5). */
export const NO_DISABLED_THINKING_MODELS: readonly string[] = ['claude-sonnet-5-5'];

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const blocksOf = (content: unknown): Json[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content.filter(isObject) : [];

/** The model id without a date suffix (claude-sonnet-5-5-20260928 is claude-sonnet-5-5). */
export function baseModel(model: unknown): string {
  const id = typeof model === 'string' ? model : '';
  return id.replace(/-\d{8}$/, '');
}

export const runsPrefixCheck = (model: unknown): boolean => PREFIX_CHECK_MODELS.includes(baseModel(model));

function canonical(block: Json): string {
  const { cache_control: _ignored, ...rest } = block;
  return JSON.stringify(rest);
}

const chain = (key: string, part: string): string => createHash('sha256').update(key).update(part).digest('hex');

/** The key of what comes before the messages: system and tools (cache marks are not part of it). */
function headKey(body: Json): string {
  const tools = Array.isArray(body['tools']) ? body['tools'].filter(isObject).map(canonical) : [];
  return chain('', JSON.stringify({ system: blocksOf(body['system']).map(canonical), tools }));
}

/** Each block of each message with the key of its prefix (everything before it). */
function prefixKeys(
  body: Json,
  extra?: { role: string; blocks: readonly Json[] },
): { i: number; j: number; block: Json; prefix: string }[] {
  const messages = Array.isArray(body['messages']) ? body['messages'].filter(isObject) : [];
  const all = messages.map((m) => ({ role: String(m['role']), blocks: blocksOf(m['content']) }));
  if (extra) all.push({ role: extra.role, blocks: [...extra.blocks] });
  const out: { i: number; j: number; block: Json; prefix: string }[] = [];
  let key = headKey(body);
  all.forEach((message, i) => {
    key = chain(key, `role:${message.role}`);
    message.blocks.forEach((block, j) => {
      out.push({ i, j, block, prefix: key });
      key = chain(key, canonical(block));
    });
  });
  return out;
}

const isThinking = (block: Json): boolean => block['type'] === 'thinking' || block['type'] === 'redacted_thinking';
const signatureOf = (block: Json): string => String(block['type'] === 'redacted_thinking' ? block['data'] : block['signature']);

/**
 * The blocks of these models are bound to the account that produced them ("Preserved thinking":
 * Sonnet 5.5 and Haiku 5.5); sent with another account's key they are left out without an error
 * and listed in `input_transformations` (the reason words are the fake's own).
 */
export const ACCOUNT_BOUND_MODELS: readonly string[] = ['claude-sonnet-5-5', 'claude-haiku-5-5'];
/** Besides its own, the blocks a model reads ("Preserved thinking", Switching models mid-conversation). */
const ALSO_READS: Readonly<Record<string, readonly string[]>> = { 'claude-fable-5-1': ['claude-opus-5', 'claude-opus-5-5'] };

const reads = (model: string, producer: string): boolean => model === producer || (ALSO_READS[model] ?? []).includes(producer);

interface Produced {
  readonly model: string;
  /** The key that asked for it (the fake's stand-in for the account). */
  readonly account: string | undefined;
  readonly prefix: string;
  /** The block as sent (its text must come back unchanged). */
  readonly canonical: string;
}

export interface PrefixCheck {
  /** The 400 the API answers, or null. */
  readonly breach: RuleBreach | null;
  /** With "drop_block": the blocks the API dropped, as its `input_transformations` lists them. */
  readonly dropped: readonly Json[];
}

/** What the fake produced, keyed by signature: the prefix each thinking block was written after. */
export class ThinkingLedger {
  private readonly produced = new Map<string, Produced>();
  private counter = 0;

  /** A signature no other block has (the real API's are opaque and unique). */
  sign(thinking: string): string {
    this.counter += 1;
    return `fakesig-${this.counter}-${createHash('sha256').update(thinking).digest('base64url').slice(0, 16)}`;
  }

  /** Remembers the thinking blocks of an answer to `body`. */
  record(body: unknown, content: readonly Json[], account?: string): void {
    if (!isObject(body)) return;
    for (const { i, block, prefix } of prefixKeys(body, { role: 'assistant', blocks: content })) {
      const messages = Array.isArray(body['messages']) ? body['messages'].length : 0;
      if (i !== messages || !isThinking(block)) continue;
      this.produced.set(signatureOf(block), { model: baseModel(body['model']), account, prefix, canonical: canonical(block) });
    }
  }

  knows(block: Json): boolean {
    const known = this.produced.get(signatureOf(block));
    return known !== undefined && known.canonical === canonical(block);
  }

  /** The prefix check of a request to a model that runs it. */
  check(body: unknown, account?: string): PrefixCheck {
    if (!isObject(body) || !runsPrefixCheck(body['model'])) return { breach: null, dropped: [] };
    const drop = dropsMismatches(body);
    const model = baseModel(body['model']);
    const dropped: Json[] = [];
    for (const { i, j, block, prefix } of prefixKeys(body)) {
      if (!isThinking(block)) continue;
      const known = this.produced.get(signatureOf(block));
      if (known === undefined) continue;
      const path = `messages.${i}.content.${j}`;
      if (!reads(model, known.model)) {
        dropped.push({ type: 'thinking_dropped', path, reason: 'model_mismatch' });
        continue;
      }
      if (ACCOUNT_BOUND_MODELS.includes(known.model) && known.account !== account) {
        dropped.push({ type: 'thinking_dropped', path, reason: 'account_mismatch' });
        continue;
      }
      if (known.prefix === prefix) continue;
      if (!drop)
        return {
          breach: {
            status: 400,
            type: 'invalid_request_error',
            rule: 'thinking_prefix',
            message: `${path}: Invalid \`signature\` in \`${String(block['type'])}\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".`,
          },
          dropped: [],
        };
      dropped.push({ type: 'thinking_dropped', path, reason: 'prefix_mismatch' });
    }
    return { breach: null, dropped };
  }
}

function dropsMismatches(body: Json): boolean {
  const thinking = body['thinking'];
  const binding = isObject(thinking) ? thinking['block_binding'] : undefined;
  return isObject(binding) && binding['prefix_mismatch_behavior'] === 'drop_block';
}

const refusal = (rule: RuleBreach['rule'], message: string): RuleBreach => ({ status: 400, type: 'invalid_request_error', rule, message });

/** The thinking settings the default model refuses (What's new in Claude Sonnet 5.5). */
export function checkThinkingSetting(body: Json): RuleBreach | null {
  const model = baseModel(body['model']);
  if (!NO_DISABLED_THINKING_MODELS.includes(model)) return null;
  const thinking = isObject(body['thinking']) ? body['thinking'] : {};
  if (thinking['type'] === 'disabled')
    return refusal('thinking_setting', `thinking.type: "disabled" is not supported on ${model}; send {"type": "between_tools"} instead`);
  const effort = isObject(body['output_config']) ? body['output_config']['effort'] : undefined;
  if (thinking['type'] === 'between_tools' && (effort === 'xhigh' || effort === 'max'))
    return refusal('thinking_setting', `thinking.type: "between_tools" is not supported at effort "${String(effort)}"; use "adaptive"`);
  const choice = isObject(body['tool_choice']) ? body['tool_choice']['type'] : undefined;
  if (choice === 'any' || choice === 'tool')
    return refusal('tool_choice', `tool_choice: forced tool use is not supported on ${model}; use "auto" or "none"`);
  return null;
}

/** Whether the answer's thinking text is returned: `display: "summarized"`, or the words under `between_tools`. */
function displays(body: Json): { reasoning: boolean; words: boolean; upFront: boolean } {
  const thinking = isObject(body['thinking']) ? body['thinking'] : {};
  const summarized = thinking['display'] === 'summarized';
  if (thinking['type'] === 'between_tools') return { reasoning: false, words: true, upFront: false };
  return { reasoning: summarized, words: summarized, upFront: true };
}

/** How often an up-front reasoning block comes back redacted. */
const REDACTED_EVERY = 5;

/**
 * A scripted answer as the default model gives it: a reasoning block first (unless
 * `between_tools`), the words before a tool call in a thinking block (their text only when the
 * display returns it), every block signed by `ledger`. Text after the last tool call stays text.
 */
export function inDefaultModelShape(step: ResponseStep, body: unknown, ledger: ThinkingLedger, turn: number): ResponseStep {
  const request = isObject(body) ? body : {};
  const shown = displays(request);
  const lastTool = step.content.map((b) => b.type).lastIndexOf('tool_use');
  const content: ScriptBlock[] = [];
  if (shown.upFront && !step.content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking')) {
    const reasoning = `Turn ${turn}: working out the next step.`;
    if (turn % REDACTED_EVERY === 0) content.push({ type: 'redacted_thinking', data: ledger.sign(`redacted ${reasoning}`) });
    else {
      const thinking = shown.reasoning ? reasoning : '';
      content.push({ type: 'thinking', thinking, signature: ledger.sign(reasoning) });
    }
  }
  step.content.forEach((block, index) => {
    if (block.type === 'text' && index < lastTool) {
      const thinking = shown.words ? block.text : '';
      content.push({ type: 'thinking', thinking, signature: ledger.sign(block.text) });
    } else if (block.type === 'thinking' && block.signature === undefined) {
      content.push({ ...block, signature: ledger.sign(block.thinking) });
    } else content.push(block);
  });
  return { ...step, content };
}

/**
 * On a model with preserved thinking: the answer in the default model's shape (when asked),
 * every thinking block signed uniquely and remembered with its prefix, and the blocks the API
 * dropped (another model's or account's, or a prefix mismatch under "drop_block") listed in
 * `input_transformations`.
 */
export function preservedThinking(
  step: ResponseStep,
  requestBody: unknown,
  ledger: ThinkingLedger,
  shape: boolean,
  turn: number,
  account?: string,
): ResponseStep {
  const body = isObject(requestBody) ? requestBody : {};
  if (!runsPrefixCheck(body['model'])) return step;
  const shaped = shape
    ? inDefaultModelShape(step, body, ledger, turn)
    : {
        ...step,
        content: step.content.map((b) =>
          b.type === 'thinking' && b.signature === undefined ? { ...b, signature: ledger.sign(b.thinking) } : b,
        ),
      };
  ledger.record(body, ResponseStep.parse(shaped).content.map(plainBlock), account);
  const dropped = ledger.check(body, account).dropped;
  return dropped.length > 0 ? { ...shaped, input_transformations: [...dropped] } : shaped;
}
