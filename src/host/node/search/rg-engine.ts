import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { SearchLine } from '../../../core/ports';
import { passes, type EngineQuery } from './engine-query';
import type { PathFilter } from './filters';
import type { HitCollector } from './hits';

// ripgrep as the engine where one is at hand: its regex engine runs in linear time, so a model's
// pattern cannot stall it. Files come in path order (--sort path) with the same rules the
// Node walk applies; each hit file is checked against the shared filter before it is taken.

/** What ripgrep answered: it searched (the collector holds the hits), or it cannot run the pattern. */
export type RipgrepOutcome = 'searched' | { readonly unsupported: string };

/** The walk's rules as ripgrep flags: dot files seen, ignore files read without a repository, nothing of the user's own config or global ignores, `.git` never entered. */
const WALK_ARGS = ['--no-config', '--hidden', '--no-require-git', '--no-ignore-global', '--glob', '!.git'];

export function ripgrepArgs(query: EngineQuery): string[] {
  const args = ['--json', '--sort', 'path', ...WALK_ARGS, '--crlf'];
  args.push('--encoding', 'none', '--max-filesize', String(query.maxFileBytes));
  if (!query.regex) args.push('--fixed-strings');
  args.push(query.caseSensitive ? '--case-sensitive' : '--ignore-case');
  if (query.contextLines > 0) args.push('--context', String(query.contextLines));
  args.push('--regexp', query.pattern, '--', query.filter.base === '' ? '.' : query.filter.base);
  return args;
}

interface RgText {
  readonly text?: string;
  readonly bytes?: string;
}

interface RgMessage {
  readonly type: string;
  readonly data: { readonly path?: RgText; readonly lines?: RgText; readonly line_number?: number };
}

function textOf(value: RgText | undefined): string {
  const raw = value?.text ?? (value?.bytes !== undefined ? Buffer.from(value.bytes, 'base64').toString('utf8') : '');
  return raw.replace(/\r?\n$/, '').replace(/\r$/, '');
}

function pathOf(message: RgMessage): string {
  return textOf(message.data.path).replace(/^\.\//, '');
}

export async function ripgrepSearch(
  rgPath: string,
  query: EngineQuery,
  collector: HitCollector,
  signal: AbortSignal,
): Promise<RipgrepOutcome> {
  const child = spawn(rgPath, ripgrepArgs(query), { cwd: query.filter.ignore.rootAbs, env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  exited.catch(() => undefined);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(0, 4000)));
  const stop = (): void => void child.kill('SIGKILL');
  const timer = setTimeout(stop, Math.max(0, query.deadline - Date.now()));
  signal.addEventListener('abort', stop, { once: true });
  let lines: SearchLine[] = [];
  let lastSearched: string | null = null;
  try {
    for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) {
      if (line === '') continue;
      const message = JSON.parse(line) as RgMessage;
      if (message.type === 'begin') lines = [];
      else if (message.type === 'match' || message.type === 'context')
        lines.push({ line: message.data.line_number ?? 0, text: textOf(message.data.lines), match: message.type === 'match' });
      else if (message.type === 'end') {
        const path = pathOf(message);
        lastSearched = path;
        if ((await passes(query, path)) && !collector.add(path, lines)) break;
      }
    }
    if (collector.done) stop();
    const code = await exited.catch((error: Error) => {
      throw new Error(`ripgrep could not run (${rgPath}): ${error.message}`);
    });
    if (collector.done) return 'searched';
    if (Date.now() >= query.deadline) collector.outOfTime(query.budgetMs, lastSearched);
    else if (code === 2 && collector.files.length === 0 && /regex parse error|error parsing regex/i.test(stderr))
      return { unsupported: stderr.trim() };
    return 'searched';
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
    if (child.exitCode === null && child.signalCode === null) stop();
  }
}

/**
 * The files ripgrep's walk finds under the filter's base (root-relative, unsorted), or null when
 * it cannot run. Its own threads walk the tree; the caller still applies the shared filter to what
 * it keeps. `name`: only files of that exact name (fewer paths to hand over; folders are still entered).
 */
export async function ripgrepFiles(rgPath: string, filter: PathFilter, signal?: AbortSignal, name?: string): Promise<string[] | null> {
  const only = name === undefined ? [] : ['--glob', name];
  const args = ['--files', '--null', ...WALK_ARGS, ...only, '--', filter.base === '' ? '.' : filter.base];
  const child = spawn(rgPath, args, { cwd: filter.ignore.rootAbs, env: {}, stdio: ['ignore', 'pipe', 'ignore'] });
  const stop = (): void => void child.kill('SIGKILL');
  signal?.addEventListener('abort', stop, { once: true });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  try {
    const code = await new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(null));
      child.once('close', resolve);
    });
    if (signal?.aborted) throw new Error('the listing was cancelled');
    // 0: files listed; 1: none; 2: listed, some folder unreadable (skipped, as the walk skips it). Killed or not started: the Node walk.
    if (code === null || code > 2) return null;
    const text = Buffer.concat(chunks).toString('utf8');
    return text === ''
      ? []
      : text
          .slice(0, -1)
          .split('\0')
          .map((p) => (p.startsWith('./') ? p.slice(2) : p));
  } finally {
    signal?.removeEventListener('abort', stop);
    if (child.exitCode === null && child.signalCode === null) stop();
  }
}
