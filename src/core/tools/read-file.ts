import { z } from 'zod';
import { ToolError } from './errors';
import type { ToolDefinition } from './types';
import { readExisting, textOf } from './text';

/** Largest file read_file takes at all (a page of it is returned). */
export const MAX_READ_FILE_BYTES = 16 * 1024 * 1024;
/** Most bytes of text one page returns. */
export const MAX_PAGE_BYTES = 64 * 1024;
export const DEFAULT_PAGE_LINES = 2000;

const ReadFileInput = z.strictObject({
  path: z.string().min(1).describe('Workspace-relative path of the file to read.'),
  offset: z.number().int().positive().default(1).describe('First line to return (1-based).'),
  limit: z.number().int().positive().max(10_000).default(DEFAULT_PAGE_LINES).describe('Most lines to return.'),
});
type ReadFileInput = z.infer<typeof ReadFileInput>;

const utf8 = new TextEncoder();

interface Page {
  readonly text: string;
  /** Last line returned (1-based); offset - 1 when none. */
  readonly last: number;
  /** The last line returned was cut at the byte cap. */
  readonly cut: boolean;
}

/** Lines from offset, at most limit of them and MAX_PAGE_BYTES of UTF-8 (a single longer line is cut). */
export function pageOf(lines: readonly string[], offset: number, limit: number): Page {
  const out: string[] = [];
  let bytes = 0;
  for (let i = offset - 1; i < lines.length && out.length < limit; i++) {
    const line = lines[i]!;
    const size = utf8.encode(line).length + 1;
    if (bytes + size > MAX_PAGE_BYTES) {
      if (out.length > 0) break;
      let cut = line.slice(0, MAX_PAGE_BYTES);
      while (utf8.encode(cut).length > MAX_PAGE_BYTES) cut = cut.slice(0, Math.floor(cut.length * 0.9));
      return { text: cut, last: i + 1, cut: true };
    }
    out.push(line);
    bytes += size;
  }
  return { text: out.join('\n'), last: offset - 1 + out.length, cut: false };
}

export const readFileTool: ToolDefinition<ReadFileInput> = {
  name: 'read_file',
  description: `Read a text file of the workspace (unsaved editor changes included), a page at a time: lines from offset (1-based), at most limit lines (default ${DEFAULT_PAGE_LINES}) and ${MAX_PAGE_BYTES / 1024} KiB. When there is more, the last line says which offset reads on.`,
  input: ReadFileInput,
  idempotency: 'idempotent',
  replayPolicy: 'auto',
  sideEffects: [],
  concurrentRead: true,
  compensation: 'nothing to undo (read only)',
  summarize: (input) => `read ${input.path}${input.offset > 1 ? ` from line ${input.offset}` : ''}`,
  async execute(input, ctx) {
    const path = await ctx.workspace.normalize(input.path);
    const stat = await ctx.workspace.stat(path);
    if (stat?.kind === 'dir') throw new ToolError(`${path} is a folder; use list_dir`);
    if (stat?.kind === 'other')
      throw new ToolError(`${path} is not a regular file (a pipe, socket or device); only regular files can be read`);
    if (stat !== null && stat.size > MAX_READ_FILE_BYTES)
      throw new ToolError(
        `${path} is ${stat.size} bytes, more than read_file takes (${MAX_READ_FILE_BYTES}); use search_text to find the lines you need`,
      );
    const { text } = textOf(await readExisting(ctx.workspace, path));
    const lines = text.split('\n');
    const total = text.endsWith('\n') ? lines.length - 1 : lines.length;
    if (input.offset > Math.max(total, 1)) throw new ToolError(`${path} has ${total} lines; offset ${input.offset} is past its end`);
    if (input.offset === 1 && total <= input.limit && utf8.encode(text).length <= MAX_PAGE_BYTES) return { content: text };
    const page = pageOf(lines.slice(0, total), input.offset, input.limit);
    const more = page.last < total ? `; more: read_file with offset ${page.last + 1}` : '; end of file';
    const cut = page.cut ? ` (line ${page.last} is longer than a page and was cut at ${MAX_PAGE_BYTES} bytes)` : '';
    return { content: `${page.text}\n[lines ${input.offset}-${page.last} of ${total}${cut}${more}]` };
  },
};
