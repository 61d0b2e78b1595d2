import { z } from 'zod';

// Messages as the Anthropic Messages API defines them. Known blocks are checked; other block
// types (thinking, redacted_thinking, server tools...) pass through untouched so that what we
// send back after a resume is byte-identical to what the model produced.

export const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
export const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
});
export const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
});
export const OtherBlock = z.looseObject({ type: z.string() });

// A known type is checked against its own schema alone (a plain union tried each in turn, and a
// failed try costs: a third of a resume's time spent checking a long context's messages); a block
// that does not match it, or of another type, is an OtherBlock.
export const ContentBlock = z.union([z.discriminatedUnion('type', [TextBlock, ToolUseBlock, ToolResultBlock]), OtherBlock]);

export const MessageParam = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ContentBlock)]),
});

export type TextBlock = z.infer<typeof TextBlock>;
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;
export type ContentBlock = z.infer<typeof ContentBlock>;
export type MessageParam = z.infer<typeof MessageParam>;

export function isToolUse(block: ContentBlock): block is ToolUseBlock {
  return block.type === 'tool_use';
}

export function toolUsesOf(message: MessageParam): ToolUseBlock[] {
  if (typeof message.content === 'string') return [];
  return message.content.filter((b): b is ToolUseBlock => b.type === 'tool_use' && ToolUseBlock.safeParse(b).success);
}

/**
 * True when an answer has nothing to store: no block, or only text with no words. Such a message
 * makes every later request invalid ("all messages must have non-empty content").
 */
export function isEmptyAnswer(content: readonly ContentBlock[]): boolean {
  return content.every((block) => block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === ''));
}
