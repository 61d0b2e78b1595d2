import type { ContentBlock, MessageParam } from '../../../core/model/messages';

// What the model said, what the person said and what each call returned, read from a run's active
// history for the view model (view-build.ts). Pure.

/** Caps on what crosses to the webview per step and per call (the rest stays on disk). */
export const TEXT_MAX = 20_000;
export const RESULT_MAX = 20_000;
export const INPUT_TEXT_MAX = 4_000;

function blockText(content: ContentBlock[] | string | undefined, type: 'text' | 'thinking'): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return type === 'text' ? content : '';
  const parts: string[] = [];
  for (const block of content) {
    const record = block as Record<string, unknown>;
    if (block.type === type && typeof record[type] === 'string') parts.push(record[type]);
  }
  return parts.join('\n\n');
}

/** Text of a tool_result block's content. */
export function resultText(content: unknown, added: (text: string) => boolean = () => false): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: unknown) =>
      b && typeof b === 'object' && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : '',
    )
    .filter((t) => t !== '' && !added(t))
    .join('\n');
}

/** Every tool result of the history by call id, without the text blocks `added` says the runtime added (its notes). */
export function toolResults(messages: readonly MessageParam[], added?: (text: string) => boolean): Map<string, string> {
  const results = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const id = (block as { tool_use_id?: unknown }).tool_use_id;
      if (typeof id === 'string') results.set(id, resultText((block as { content?: unknown }).content, added));
    }
  }
  return results;
}

/**
 * What the model said (and thought) in the assistant messages of `messages[from, to)`. An answer
 * with no text whose thinking holds words said them: the default model writes its words between
 * tool calls inside thinking blocks, and those are shown, not folded away as thinking.
 */
export function assistantWords(messages: readonly MessageParam[], from: number, to: number): { text: string; thinking: string } {
  const texts: string[] = [];
  const thoughts: string[] = [];
  for (let i = Math.max(0, from); i < Math.min(to, messages.length); i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const text = blockText(message.content, 'text').trim();
    const thinking = blockText(message.content, 'thinking').trim();
    if (text !== '') texts.push(text);
    if (thinking !== '') (text === '' ? texts : thoughts).push(thinking);
  }
  return { text: texts.join('\n\n'), thinking: thoughts.join('\n\n') };
}

/**
 * The person's own words in `messages[from, to)` (a follow-up instruction), tool results left out,
 * and text blocks that `added` says the runtime added (its notes to the model) too.
 */
export function userWords(
  messages: readonly MessageParam[],
  from: number,
  to: number,
  added: (text: string) => boolean = () => false,
): string {
  const texts: string[] = [];
  for (let i = Math.max(0, from); i < Math.min(to, messages.length); i++) {
    const { role, content } = messages[i]!;
    if (role !== 'user') continue;
    const blocks = typeof content === 'string' ? [content] : content.flatMap((b) => (b.type === 'text' ? [blockText([b], 'text')] : []));
    for (const block of blocks) if (block.trim() !== '' && !added(block)) texts.push(block.trim());
  }
  return texts.join('\n\n');
}
