import { z } from 'zod';
import { decodeText } from '../patches/hash';
import type { Workspace } from '../ports';
import { ToolError } from './errors';
import type { ToolDefinition } from './types';
import { capText, childPath, normalizeDir } from './text';

const SKIPPED_FOLDERS = new Set(['.git', 'node_modules', '.hg', '.svn']);
const MAX_FILES = 5_000;
const MAX_FILE_BYTES = 1024 * 1024;

const SearchTextInput = z.strictObject({
  pattern: z.string().min(1).describe('Text to find (a JavaScript regular expression when regex is true).'),
  path: z.string().default('.').describe('Folder to search, workspace-relative.'),
  regex: z.boolean().default(false),
  max_results: z.number().int().positive().max(1000).default(100),
});
type SearchTextInput = z.infer<typeof SearchTextInput>;

function matcherOf(input: SearchTextInput): (line: string) => boolean {
  if (!input.regex) return (line) => line.includes(input.pattern);
  try {
    const re = new RegExp(input.pattern);
    return (line) => re.test(line);
  } catch (error) {
    throw new ToolError(`invalid regular expression: ${(error as Error).message}`);
  }
}

async function* walkFiles(workspace: Workspace, dir: string, budget: { files: number }): AsyncGenerator<string> {
  const entries = await workspace.list(dir);
  for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
    if (budget.files <= 0) return;
    const path = childPath(dir, entry.name);
    if (entry.kind === 'dir' && !SKIPPED_FOLDERS.has(entry.name)) yield* walkFiles(workspace, path, budget);
    else if (entry.kind === 'file') {
      budget.files--;
      yield path;
    }
  }
}

export const searchTextTool: ToolDefinition<SearchTextInput> = {
  name: 'search_text',
  description: 'Search the text files of a workspace folder, recursively, for lines matching a pattern. Returns path:line: text.',
  input: SearchTextInput,
  idempotency: 'idempotent',
  replayPolicy: 'auto',
  sideEffects: [],
  compensation: 'nothing to undo (read only)',
  summarize: (input) => `search "${input.pattern}" in ${input.path}`,
  async execute(input, ctx) {
    const matches = matcherOf(input);
    const root = await normalizeDir(ctx.workspace, input.path);
    const hits: string[] = [];
    for await (const path of walkFiles(ctx.workspace, root, { files: MAX_FILES })) {
      const file = await ctx.workspace.read(path);
      if (file === null || file.bytes.length > MAX_FILE_BYTES) continue;
      const decoded = decodeText(file.bytes);
      if (decoded === null) continue;
      const lines = decoded.text.split('\n');
      for (let i = 0; i < lines.length && hits.length < input.max_results; i++) {
        if (matches(lines[i]!)) hits.push(`${path}:${i + 1}: ${lines[i]!.trim()}`);
      }
      if (hits.length >= input.max_results) break;
    }
    if (hits.length === 0) return { content: 'no matches' };
    const more = hits.length >= input.max_results ? `\n[stopped at ${input.max_results} matches]` : '';
    return { content: capText(hits.join('\n') + more) };
  },
};
