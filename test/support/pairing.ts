import type { FakeAnthropic } from './fake-anthropic/server';

// The tool_use / tool_result rule of the Messages API, checked on every request a fake received:
// each assistant tool_use is answered by a tool_result at the start of the very next user message,
// and every tool_result answers a tool_use of the message before it.

interface Block {
  readonly type: string;
  readonly id?: string;
  readonly tool_use_id?: string;
}

function blocksOf(content: unknown): Block[] {
  return typeof content === 'string' ? [{ type: 'text' }] : (content as Block[]);
}

/** The first way `messages` break the rule, or undefined when they keep it. */
export function pairingError(messages: readonly { role: string; content: unknown }[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const blocks = blocksOf(message.content);
    const previous = i > 0 ? messages[i - 1]! : undefined;
    const asked = previous?.role === 'assistant' ? blocksOf(previous.content).flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : [];
    if (message.role === 'user') {
      const leading = blocks.slice(0, asked.length).map((b) => (b.type === 'tool_result' ? b.tool_use_id : undefined));
      for (const id of asked) if (!leading.includes(id)) return `messages.${i}: tool_use ${id} has no tool_result right after it`;
      const results = blocks.filter((b) => b.type === 'tool_result');
      for (const r of results) if (!asked.includes(r.tool_use_id)) return `messages.${i}: tool_result ${r.tool_use_id} answers no tool_use`;
    } else if (asked.length > 0) {
      return `messages.${i}: the tool_use blocks of messages.${i - 1} are followed by another assistant message`;
    }
  }
  const last = messages.at(-1);
  if (last?.role === 'assistant' && blocksOf(last.content).some((b) => b.type === 'tool_use'))
    return 'the last message is an unanswered tool_use';
  return undefined;
}

/** Throws naming the request and the break when any request the fake received breaks the rule. */
export function assertEveryRequestPairs(fake: FakeAnthropic): void {
  fake.requests.forEach((request, n) => {
    const body = request.body as { messages?: { role: string; content: unknown }[] };
    const error = pairingError(body.messages ?? []);
    if (error !== undefined) throw new Error(`request ${n}: ${error}`);
  });
}
