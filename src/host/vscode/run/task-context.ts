import type { ContextChip } from '../../../protocol/messages';

// The task with the context the person attached, as the model reads it: one text for the
// Timeline's composer (conversation.ts) and the palette's Agent: Run (run-commands.ts).

const MAX_SELECTION_CHARS = 20_000;

/** The task as the model reads it: the person's words, then each piece of context. */
export async function taskWithContext(
  task: string,
  context: readonly ContextChip[],
  read: (chip: ContextChip) => Promise<string | undefined>,
): Promise<string> {
  const parts = [task.trim()];
  for (const chip of context) {
    if (chip.kind === 'selection') {
      const text = await read(chip);
      if (text === undefined) continue;
      const lines = `${chip.startLine ?? '?'}-${chip.endLine ?? '?'}`;
      parts.push(`Context: the user selected lines ${lines} of ${chip.path}:\n\`\`\`\n${text.slice(0, MAX_SELECTION_CHARS)}\n\`\`\``);
    } else parts.push(`Context: the user points at the file ${chip.path}.`);
  }
  return parts.join('\n\n');
}
