import { z } from 'zod';
import type { SearchFileHits, TextSearchResult } from '../ports';
import { ToolError } from './errors';
import type { ToolDefinition } from './types';
import { MAX_RESULT_CHARS, normalizeDir, requireFolder } from './text';

export const MAX_SEARCH_RESULTS = 1000;

const Globs = z.array(z.string().min(1).max(500)).max(50).default([]);

const SearchTextInput = z.strictObject({
  pattern: z.string().min(1).max(2000).describe('Text to find; a regular expression when regex is true.'),
  path: z.string().default('.').describe('Folder to search, workspace-relative; "." for the whole workspace folder.'),
  regex: z.boolean().default(false).describe('Treat pattern as a regular expression (ripgrep / JavaScript syntax).'),
  case_sensitive: z.boolean().default(true),
  include: Globs.describe(
    'Only files matching one of these globs (relative to path; "*.ts" matches at any depth, "src/**/*.ts" from path).',
  ),
  exclude: Globs.describe('Leave out files and folders matching one of these globs.'),
  context_lines: z.number().int().min(0).max(5).default(0).describe('Lines of context before and after each match.'),
  max_results: z.number().int().positive().max(MAX_SEARCH_RESULTS).default(100).describe('Stop after this many matching lines.'),
});
type SearchTextInput = z.infer<typeof SearchTextInput>;

function fileBlock(file: SearchFileHits): string {
  const out = [file.path];
  let previous: number | null = null;
  for (const line of file.lines) {
    if (previous !== null && line.line > previous + 1) out.push('  --');
    out.push(`  ${line.line}${line.match ? ':' : '-'} ${line.text}`);
    previous = line.line;
  }
  return out.join('\n');
}

function sizeText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** The closing line: complete, or exactly where the search stopped and how to narrow it. */
export function searchFooter(result: TextSearchResult, input: SearchTextInput, shownFiles: number, dir: string): string {
  const count = `${result.matches} matching line${result.matches === 1 ? '' : 's'} in ${result.files.length} file${result.files.length === 1 ? '' : 's'}`;
  const rules = `ignore files honoured; binary files and files over ${sizeText(result.maxFileBytes)} skipped`;
  const narrow = 'Narrow with path, include or exclude';
  const parts: string[] = [];
  const stop = result.stopped;
  if (stop === undefined) parts.push(`[${count}; complete: every text file under "${dir}" was searched (${rules})]`);
  else if (stop.reason === 'max_matches') {
    const where =
      stop.lastPath === null
        ? ''
        : stop.lastLine !== undefined
          ? ` inside ${stop.lastPath} at line ${stop.lastLine}`
          : ` after ${stop.lastPath}`;
    parts.push(
      `[${count}; INCOMPLETE: stopped at max_results=${input.max_results}${where}; files after that point (in path order) were not searched. ${narrow}, or raise max_results (at most ${MAX_SEARCH_RESULTS}). (${rules})]`,
    );
  } else {
    const where =
      stop.lastPath === null ? 'no match had been found when it stopped' : `every file up to ${stop.lastPath} (in path order) was searched`;
    parts.push(
      `[${count}; INCOMPLETE: stopped after the ${Math.round((stop.budgetMs ?? 0) / 1000)} s time budget: ${where}; later files were not. ${narrow}. (${rules})]`,
    );
  }
  if (shownFiles < result.files.length) {
    const hidden = result.files.slice(shownFiles);
    parts.unshift(
      `[output cap: ${hidden.length} more file${hidden.length === 1 ? '' : 's'} with matches not shown, from ${hidden[0]!.path} on; ${narrow.toLowerCase()}, or lower max_results]`,
    );
  }
  return parts.join('\n');
}

export function formatSearch(result: TextSearchResult, input: SearchTextInput, dir: string): string {
  const blocks: string[] = [];
  let size = 0;
  for (const file of result.files) {
    const block = fileBlock(file);
    if (size + block.length > MAX_RESULT_CHARS && blocks.length > 0) break;
    blocks.push(block);
    size += block.length + 1;
  }
  const footer = searchFooter(result, input, blocks.length, dir);
  return blocks.length === 0 ? `no matches\n${footer}` : `${blocks.join('\n')}\n${footer}`;
}

export const searchTextTool: ToolDefinition<SearchTextInput> = {
  name: 'search_text',
  description:
    'Search the text files under a workspace folder for lines matching a pattern (ripgrep where available). Honours .gitignore and .ignore, skips binary and very large files, groups hits by file ("path" then "  line: text"; context lines use "-"). The last line says whether the search was complete or exactly where it stopped.',
  input: SearchTextInput,
  needs: 'searchText',
  idempotency: 'idempotent',
  replayPolicy: 'auto',
  sideEffects: [],
  concurrentRead: true,
  compensation: 'nothing to undo (read only)',
  summarize: (input) => `search "${input.pattern}" in ${input.path}`,
  async execute(input, ctx) {
    const workspace = ctx.workspace;
    if (workspace.searchText === undefined) throw new ToolError('this workspace cannot be searched');
    const dir = await normalizeDir(workspace, input.path);
    await requireFolder(workspace, dir);
    const query = {
      dir,
      pattern: input.pattern,
      regex: input.regex,
      caseSensitive: input.case_sensitive,
      include: input.include,
      exclude: input.exclude,
      contextLines: input.context_lines,
      maxMatches: input.max_results,
    };
    // A bad or runaway pattern fails with the engine's message, an is_error result like a ToolError.
    const result = await workspace.searchText(query, ctx.signal);
    return { content: formatSearch(result, input, dir) };
  },
};
