import type { ContentBlock, MessageParam } from './messages';
import type { ToolSpec } from './provider';

// Prompt caching: cache_control breakpoints are added to a copy of the request, never to the
// run's messages, so what the journal holds (and what a resume sends) stays byte for byte what
// the model produced. The API allows at most 4 breakpoints: the last tool definition, the
// system prompt, the latest message (this call writes the cache up to it) and the message that
// ended the previous call (where the cache the previous call wrote ends).

export const MAX_CACHE_BREAKPOINTS = 4;
const EPHEMERAL = { type: 'ephemeral' } as const;

export interface CachedRequestParts {
  readonly tools: readonly (ToolSpec & { cache_control?: typeof EPHEMERAL })[];
  readonly system?: readonly { type: 'text'; text: string; cache_control?: typeof EPHEMERAL }[];
  readonly messages: readonly MessageParam[];
}

function markedBlocks(content: MessageParam['content']): ContentBlock[] {
  const blocks: ContentBlock[] = typeof content === 'string' ? [{ type: 'text', text: content }] : [...content];
  // Thinking blocks cannot carry cache_control: the mark goes on the last block that can.
  for (let i = blocks.length - 1; i >= 0; i--) {
    const type = blocks[i]!.type;
    if (type !== 'thinking' && type !== 'redacted_thinking') {
      blocks[i] = { ...blocks[i]!, cache_control: EPHEMERAL };
      return blocks;
    }
  }
  return blocks;
}

/** Where the previous call's history ended: the message just before the latest assistant answer. */
function previousEnd(messages: readonly MessageParam[]): number {
  for (let i = messages.length - 1; i > 0; i--) if (messages[i]!.role === 'assistant') return i - 1;
  return -1;
}

/** The request's tools, system and messages with cache breakpoints (copies; the inputs are not changed). */
export function withCacheBreakpoints(
  tools: readonly ToolSpec[],
  system: string | undefined,
  messages: readonly MessageParam[],
): CachedRequestParts {
  const marked = new Set<number>();
  if (messages.length > 0) marked.add(messages.length - 1);
  const previous = previousEnd(messages);
  if (previous >= 0) marked.add(previous);
  const cachedTools = tools.map((tool, i) => (i === tools.length - 1 ? { ...tool, cache_control: EPHEMERAL } : tool));
  return {
    tools: cachedTools,
    ...(system !== undefined && system !== '' ? { system: [{ type: 'text' as const, text: system, cache_control: EPHEMERAL }] } : {}),
    messages: messages.map((message, i) => (marked.has(i) ? { role: message.role, content: markedBlocks(message.content) } : message)),
  };
}
