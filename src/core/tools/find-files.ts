import { z } from 'zod';
import { ToolError } from './errors';
import type { ToolDefinition } from './types';
import { normalizeDir, requireFolder } from './text';

export const MAX_FIND_RESULTS = 2000;

const FindFilesInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(500)
    .describe('Glob over the path relative to path: "*.md" matches at any depth, "src/**/*.test.ts" from path, "{a,b}/*.json" either.'),
  path: z.string().default('.').describe('Folder to look in, workspace-relative; "." for the whole workspace folder.'),
  exclude: z.array(z.string().min(1).max(500)).max(50).default([]).describe('Leave out files and folders matching one of these globs.'),
  max_results: z.number().int().positive().max(MAX_FIND_RESULTS).default(200),
});
type FindFilesInput = z.infer<typeof FindFilesInput>;

export const findFilesTool: ToolDefinition<FindFilesInput> = {
  name: 'find_files',
  description:
    'Find files by glob under a workspace folder, sorted by path. Honours .gitignore and .ignore. The last line says how many matched in all and how many more were not listed.',
  input: FindFilesInput,
  needs: 'findFiles',
  idempotency: 'idempotent',
  replayPolicy: 'auto',
  sideEffects: [],
  concurrentRead: true,
  compensation: 'nothing to undo (read only)',
  summarize: (input) => `find ${input.pattern} in ${input.path}`,
  async execute(input, ctx) {
    const workspace = ctx.workspace;
    if (workspace.findFiles === undefined) throw new ToolError('this workspace cannot list files by glob');
    const dir = await normalizeDir(workspace, input.path);
    await requireFolder(workspace, dir);
    const found = await workspace.findFiles({ dir, glob: input.pattern, exclude: input.exclude, max: input.max_results }, ctx.signal);
    if (found.total === 0) return { content: `no files match ${input.pattern} under "${dir}" (ignore files honoured)` };
    const more = found.total - found.paths.length;
    const footer =
      more > 0
        ? `[${more} more file${more === 1 ? '' : 's'} match (${found.total} in all) and are not listed: narrow pattern or path, or raise max_results (at most ${MAX_FIND_RESULTS})]`
        : `[${found.total} file${found.total === 1 ? '' : 's'}; complete]`;
    return { content: `${found.paths.join('\n')}\n${footer}` };
  },
};
