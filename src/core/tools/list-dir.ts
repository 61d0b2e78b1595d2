import { z } from 'zod';
import type { ToolDefinition } from './types';
import { capText, normalizeDir } from './text';

const ListDirInput = z.strictObject({
  path: z.string().default('.').describe('Workspace-relative folder; "." for the workspace root.'),
});
type ListDirInput = z.infer<typeof ListDirInput>;

export const listDirTool: ToolDefinition<ListDirInput> = {
  name: 'list_dir',
  description: 'List the entries of a workspace folder. Folders end with "/".',
  input: ListDirInput,
  idempotency: 'idempotent',
  replayPolicy: 'auto',
  sideEffects: [],
  compensation: 'nothing to undo (read only)',
  summarize: (input) => `list ${input.path}`,
  async execute(input, ctx) {
    const dir = await normalizeDir(ctx.workspace, input.path);
    const entries = await ctx.workspace.list(dir);
    const names = entries.map((entry) => (entry.kind === 'dir' ? `${entry.name}/` : entry.name)).sort((a, b) => a.localeCompare(b));
    return { content: names.length === 0 ? '(empty folder)' : capText(names.join('\n')) };
  },
};
