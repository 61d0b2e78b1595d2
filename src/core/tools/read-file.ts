import { z } from 'zod';
import type { ToolDefinition } from './types';
import { capText, readExisting, textOf } from './text';

const ReadFileInput = z.strictObject({
  path: z.string().min(1).describe('Workspace-relative path of the file to read.'),
  start_line: z.number().int().positive().optional().describe('First line to return (1-based).'),
  end_line: z.number().int().positive().optional().describe('Last line to return (inclusive).'),
});
type ReadFileInput = z.infer<typeof ReadFileInput>;

export const readFileTool: ToolDefinition<ReadFileInput> = {
  name: 'read_file',
  description: 'Read a text file of the workspace (unsaved editor changes included). Optionally a range of lines.',
  input: ReadFileInput,
  idempotency: 'idempotent',
  replayPolicy: 'auto',
  sideEffects: [],
  compensation: 'nothing to undo (read only)',
  summarize: (input) => `read ${input.path}`,
  async execute(input, ctx) {
    const { text } = textOf(await readExisting(ctx.workspace, input.path));
    if (input.start_line === undefined && input.end_line === undefined) return { content: capText(text) };
    const lines = text.split('\n');
    const start = input.start_line ?? 1;
    const end = Math.min(input.end_line ?? lines.length, lines.length);
    return { content: capText(lines.slice(start - 1, end).join('\n')) };
  },
};
