import { decodeText } from '../patches/hash';
import type { LiveFile, Workspace } from '../ports';
import { ToolError } from './errors';

/** Text of the tool_result is capped so one huge file cannot fill the context window. */
export const MAX_RESULT_CHARS = 100_000;

export function capText(text: string, max = MAX_RESULT_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[... truncated: ${text.length - max} more characters]`;
}

export async function readExisting(workspace: Workspace, path: string): Promise<LiveFile> {
  const normalized = await workspace.normalize(path);
  const live = await workspace.read(normalized);
  if (live === null) throw new ToolError(`${normalized} does not exist`);
  return live;
}

export function textOf(file: LiveFile): { text: string; bom: boolean } {
  const decoded = decodeText(file.bytes);
  if (decoded === null)
    throw new ToolError(`${file.path} is a binary file (${file.bytes.length} bytes); it cannot be read or edited as text`);
  return decoded;
}

/** True when the text has line ends and every one is `\r\n` (a file written on Windows). */
export function endsLinesWithCrlf(text: string): boolean {
  return text.includes('\r\n') && !/(^|[^\r])\n/.test(text);
}

/** The text with every line end (`\n` or `\r\n`) written as `\r\n`. */
export function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}

export function childPath(dir: string, name: string): string {
  return dir === '' || dir === '.' ? name : `${dir.replace(/\/+$/, '')}/${name}`;
}

export function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** A folder path for Workspace.list: the workspace root stays "." (normalize refuses the root itself). */
export async function normalizeDir(workspace: Workspace, path: string): Promise<string> {
  const trimmed = path.trim().replace(/\\/g, '/');
  if (trimmed === '' || trimmed === '.' || trimmed === './' || trimmed === '/') return '.';
  return workspace.normalize(trimmed);
}

/** A folder path (from normalizeDir) that must name an existing folder. */
export async function requireFolder(workspace: Workspace, dir: string): Promise<void> {
  if (dir === '.') return;
  const stat = await workspace.stat(dir);
  if (stat === null) throw new ToolError(`${dir} does not exist`);
  if (stat.kind !== 'dir' && stat.kind !== 'symlink')
    throw new ToolError(`${dir} is not a folder; give its folder as path (and the file name as include), or use read_file`);
}
