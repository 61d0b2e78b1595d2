import { z } from 'zod';
import type { TreeEntry } from '../ports';
import { ToolError } from './errors';
import type { ToolDefinition } from './types';
import { normalizeDir, requireFolder } from './text';

export const MAX_LIST_ENTRIES = 500;

const ListDirInput = z.strictObject({
  path: z.string().default('.').describe('Workspace-relative folder; "." for the workspace root.'),
  depth: z.number().int().min(1).max(5).default(1).describe('Levels to show: 1 = the folder itself, 2 = also the folders in it, ...'),
});
type ListDirInput = z.infer<typeof ListDirInput>;

export function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function entryLine(entry: TreeEntry): string {
  const name = entry.path.slice(entry.path.lastIndexOf('/') + 1);
  const indent = '  '.repeat(entry.depth - 1);
  const marked = entry.ignored ? (entry.kind === 'dir' ? '  (ignored, not expanded)' : '  (ignored)') : '';
  if (entry.kind === 'dir') return `${indent}${name}/${marked}`;
  if (entry.kind === 'symlink') return `${indent}${name}@  (symbolic link)${marked}`;
  if (entry.kind === 'other') return `${indent}${name}  (not a regular file)${marked}`;
  return `${indent}${name}  ${sizeOf(entry.size ?? 0)}${marked}`;
}

export const listDirTool: ToolDefinition<ListDirInput> = {
  name: 'list_dir',
  description:
    'List a workspace folder, to a depth, with file sizes. Folders end with "/"; folders matched by .gitignore or .ignore are marked and not expanded.',
  input: ListDirInput,
  needs: 'listTree',
  idempotency: 'idempotent',
  replayPolicy: 'auto',
  sideEffects: [],
  concurrentRead: true,
  compensation: 'nothing to undo (read only)',
  summarize: (input) => `list ${input.path}${input.depth > 1 ? ` (depth ${input.depth})` : ''}`,
  async execute(input, ctx) {
    const workspace = ctx.workspace;
    if (workspace.listTree === undefined) throw new ToolError('this workspace cannot be listed');
    const dir = await normalizeDir(workspace, input.path);
    await requireFolder(workspace, dir);
    const tree = await workspace.listTree({ dir, depth: input.depth, maxEntries: MAX_LIST_ENTRIES });
    if (tree.entries.length === 0) return { content: '(empty folder)' };
    const lines = tree.entries.map(entryLine);
    if (tree.more > 0)
      lines.push(
        `[${tree.more} more entr${tree.more === 1 ? 'y' : 'ies'} not listed (cap ${MAX_LIST_ENTRIES}): list a subfolder, or lower depth]`,
      );
    return { content: lines.join('\n') };
  },
};
