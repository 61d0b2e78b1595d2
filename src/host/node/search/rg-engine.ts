import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { createInterface } from 'node:readline';
import type { SearchLine } from '../../../core/ports';
import { passes, type EngineQuery } from './engine-query';
import { ALWAYS_SKIPPED, type PathFilter } from './filters';
import type { HitCollector } from './hits';

// ripgrep as the engine where one is at hand: its regex engine runs in linear time, so a model's
// pattern cannot stall it. First its threads search the whole tree in no order; when that ends
// with no more matching lines than the cap, the files are put in path order here and the answer
// is the one a search in path order gives. A pattern with more hits than the cap (the first ones
// in path order are wanted, and a search in path order can stop at them) is searched again with
// `--sort path` (one thread), stopped at the cap. Each hit file is checked against the shared
// filter before it is taken, as the Node walk would decide.

/** What ripgrep answered: it searched (the collector holds the hits), or it cannot run the pattern. */
export type RipgrepOutcome = 'searched' | { readonly unsupported: string };

/**
 * The walk's rules as ripgrep flags: dot files seen, ignore files read without a repository,
 * nothing of the user's own config or global ignores, `.git` never entered; `.git/info/exclude`
 * of the workspace folder only (as the shared filter reads it), so that ripgrep does not look for
 * one in each of its folders.
 */
const WALK_ARGS = ['--no-config', '--hidden', '--no-require-git', '--no-ignore-global', '--glob', '!.git', '--no-ignore-exclude'];

/** The walk's flags for a workspace folder: WALK_ARGS, and its `.git/info/exclude` when it has one. */
export async function walkArgs(rootAbs: string): Promise<string[]> {
  const exclude = nodePath.join(rootAbs, ALWAYS_SKIPPED, 'info', 'exclude');
  const regular = await fs.lstat(exclude).then(
    (s) => s.isFile(),
    () => false,
  );
  return regular ? [...WALK_ARGS, '--ignore-file', exclude] : WALK_ARGS;
}

/** `sorted`: in path order on one thread; else ripgrep's threads, in no order. */
export async function ripgrepArgs(query: EngineQuery, sorted: boolean): Promise<string[]> {
  const args = ['--json', ...(sorted ? ['--sort', 'path'] : []), ...(await walkArgs(query.filter.ignore.rootAbs)), '--crlf'];
  args.push('--encoding', 'none', '--max-filesize', String(query.maxFileBytes));
  // One file never shows more than the cap: past cap + 1 its lines are not needed to say where the search stopped.
  args.push('--max-count', String(query.maxMatches + 1));
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

/** One hit file as ripgrep reported it. */
interface RgFile {
  readonly path: string;
  readonly lines: SearchLine[];
}

/** How one ripgrep process ended: on its own (`code`), or stopped by `take`, the deadline or the signal. */
interface RgRun {
  readonly code: number | null;
  readonly stderr: string;
  readonly stopped: boolean;
  readonly outOfTime: boolean;
  /** The last file ripgrep reported. */
  readonly lastSearched: string | null;
}

/** Runs ripgrep, handing each hit file to `take` as it ends (false stops ripgrep). */
async function runRipgrep(
  rgPath: string,
  args: readonly string[],
  cwd: string,
  deadline: number,
  signal: AbortSignal,
  take: (file: RgFile) => Promise<boolean>,
): Promise<RgRun> {
  const child = spawn(rgPath, args, { cwd, env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  exited.catch(() => undefined);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(0, 4000)));
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    child.kill('SIGKILL');
  };
  const timer = setTimeout(stop, Math.max(0, deadline - Date.now()));
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
        lastSearched = pathOf(message);
        if (!(await take({ path: lastSearched, lines }))) {
          stop();
          break;
        }
      }
    }
    const code = await exited.catch((error: Error) => {
      throw new Error(`ripgrep could not run (${rgPath}): ${error.message}`);
    });
    return { code, stderr, stopped, outOfTime: Date.now() >= deadline, lastSearched };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
    if (child.exitCode === null && child.signalCode === null) stop();
  }
}

function unsupported(run: RgRun): RipgrepOutcome | null {
  return run.code === 2 && /regex parse error|error parsing regex/i.test(run.stderr) ? { unsupported: run.stderr.trim() } : null;
}

/**
 * ripgrep's threads over the whole tree, in no order: the hit files that pass the filter, in path
 * order, or null when there are more matching lines than the cap (or half the time budget went).
 */
async function searchAll(rgPath: string, query: EngineQuery, signal: AbortSignal): Promise<RgFile[] | RipgrepOutcome | null> {
  const files: RgFile[] = [];
  let matches = 0;
  const deadline = Math.min(query.deadline, Date.now() + query.budgetMs / 2);
  const run = await runRipgrep(rgPath, await ripgrepArgs(query, false), query.filter.ignore.rootAbs, deadline, signal, async (file) => {
    if (!(await passes(query, file.path))) return true;
    files.push(file);
    matches += file.lines.filter((l) => l.match).length;
    return matches <= query.maxMatches;
  });
  if (signal.aborted) return 'searched';
  if (run.stopped) return null;
  return (files.length === 0 ? unsupported(run) : null) ?? inPathOrder(files);
}

/**
 * The files in path order (as comparePaths orders them) without splitting paths at each comparison:
 * with "/" as the lowest character, a path's string order is its folder-by-folder order.
 */
function inPathOrder(files: readonly RgFile[]): RgFile[] {
  const keyed = files.map((file) => ({ file, key: file.path.replaceAll('/', '\0') }));
  return keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((k) => k.file);
}

/** ripgrep in path order, stopped at the cap. */
async function searchSorted(rgPath: string, query: EngineQuery, collector: HitCollector, signal: AbortSignal): Promise<RipgrepOutcome> {
  const run = await runRipgrep(
    rgPath,
    await ripgrepArgs(query, true),
    query.filter.ignore.rootAbs,
    query.deadline,
    signal,
    async (file) => !(await passes(query, file.path)) || collector.add(file.path, file.lines),
  );
  if (collector.done || signal.aborted) return 'searched';
  if (run.outOfTime) collector.outOfTime(query.budgetMs, run.lastSearched);
  else if (collector.files.length === 0) return unsupported(run) ?? 'searched';
  return 'searched';
}

export async function ripgrepSearch(
  rgPath: string,
  query: EngineQuery,
  collector: HitCollector,
  signal: AbortSignal,
): Promise<RipgrepOutcome> {
  const all = await searchAll(rgPath, query, signal);
  if (all === null) return searchSorted(rgPath, query, collector, signal);
  if (!Array.isArray(all)) return all;
  for (const file of all) if (!collector.add(file.path, file.lines)) break;
  return 'searched';
}

/**
 * The files ripgrep's walk finds under the filter's base (root-relative, unsorted), or null when
 * it cannot run. Its own threads walk the tree; the caller still applies the shared filter to what
 * it keeps. `name`: only files of that exact name (fewer paths to hand over; folders are still entered).
 */
export async function ripgrepFiles(rgPath: string, filter: PathFilter, signal?: AbortSignal, name?: string): Promise<string[] | null> {
  const only = name === undefined ? [] : ['--glob', name];
  const args = ['--files', '--null', ...(await walkArgs(filter.ignore.rootAbs)), ...only, '--', filter.base === '' ? '.' : filter.base];
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
