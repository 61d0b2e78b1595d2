import type { SearchFileHits, TreeEntry } from '../../../core/ports';
import { engineQuery, passes, type EngineQuery, type SearchSpec } from './engine-query';
import { ALWAYS_SKIPPED, fromBase, globTest } from './filters';
import { HitCollector } from './hits';
import { searchText, type SearchOutcome } from './index';
import { findFiles, listTree, type FindSpec, type TreeSpec } from './listing';
import { matchTextsHere, RegexWorker, type WorkerHit } from './regex-worker';
import { comparePaths } from './walk';

// Search, find and tree over the disk with the editor's unsaved buffers laid over it, so the
// tools see what the person sees: a buffer's text is searched instead of its file's, and a file
// that exists only in an editor (not saved yet) is found and listed. Host-free: the VS Code
// workspace hands the buffers in.

/** An open editor buffer with unsaved text. */
export interface BufferText {
  /** Relative to the searched root, forward slashes. */
  readonly path: string;
  readonly text: string;
  /** False for a file that exists only in the editor. */
  readonly onDisk: boolean;
}

function under(base: string, path: string): boolean {
  return (base === '' || path.startsWith(`${base}/`)) && !path.split('/').includes(ALWAYS_SKIPPED);
}

/** The buffers a query covers: under its folder and passing the same ignore rules and globs as a file on disk. */
async function covered(query: EngineQuery, buffers: readonly BufferText[]): Promise<BufferText[]> {
  const out: BufferText[] = [];
  for (const buffer of buffers) if (under(query.filter.base, buffer.path) && (await passes(query, buffer.path))) out.push(buffer);
  return out.sort((a, b) => comparePaths(a.path, b.path));
}

/** The buffers' hits: plain text is matched here, a regular expression in a worker that can be stopped. */
async function bufferHits(query: EngineQuery, buffers: readonly BufferText[]): Promise<SearchFileHits[]> {
  if (buffers.length === 0) return [];
  const literal = !query.regex && query.caseSensitive ? query.pattern : null;
  const options = { maxBytes: query.maxFileBytes, literal, context: query.contextLines };
  const texts = buffers.map((b) => b.text);
  const hits = query.regex ? await inWorker(query, options, buffers, texts) : matchTextsHere(query.source, query.flags, options, texts);
  return hits.map((hit) => ({
    path: buffers[hit.index]!.path,
    lines: hit.lines.map(([index, text, match]) => ({ line: index + 1, text, match })),
  }));
}

async function inWorker(
  query: EngineQuery,
  options: ConstructorParameters<typeof RegexWorker>[2],
  buffers: readonly BufferText[],
  texts: readonly string[],
): Promise<WorkerHit[]> {
  const worker = new RegexWorker(query.source, query.flags, options);
  try {
    return await worker.run(
      buffers.map((b) => b.path),
      texts,
    );
  } finally {
    worker.close();
  }
}

/** searchText with buffers: the disk search skips the buffered files, their buffers are searched instead, in path order, under the same cap. */
export async function searchWithBuffers(
  spec: SearchSpec,
  options: { rgPath: string | null; signal?: AbortSignal },
  buffers: readonly BufferText[],
): Promise<SearchOutcome> {
  if (buffers.length === 0) return searchText(spec, options);
  // The buffers are searched while the disk is (their worker starts as ripgrep does).
  const [disk, buffered] = await Promise.all([
    searchText({ ...spec, skipFiles: new Set(buffers.map((b) => b.path)) }, options),
    engineQuery(spec, Date.now()).then(async (query) => bufferHits(query, await covered(query, buffers))),
  ]);
  // Past where the disk search stopped, nothing was searched: buffers there are not either.
  const stop = disk.stopped;
  const reach = (path: string): boolean => stop === undefined || (stop.lastPath !== null && comparePaths(path, stop.lastPath) <= 0);
  const fromBuffers = buffered.filter((hit) => reach(hit.path));
  if (fromBuffers.length === 0) return disk;
  const collector = new HitCollector(spec.maxMatches);
  const clipped = new Set(disk.files);
  const all = [...disk.files, ...fromBuffers].sort((a, b) => comparePaths(a.path, b.path));
  for (const file of all) if (!collector.add(file.path, file.lines, clipped.has(file))) break;
  const stopped = collector.stopped ?? stop;
  return { engine: disk.engine, files: collector.files, matches: collector.matches, ...(stopped ? { stopped } : {}) };
}

/** The editor-only files a find or tree query covers (dirty buffers of files on disk are already there). */
async function newFiles(
  spec: { rootAbs: string; base: string } & Partial<SearchSpec>,
  buffers: readonly BufferText[],
): Promise<BufferText[]> {
  const unsaved = buffers.filter((b) => !b.onDisk);
  if (unsaved.length === 0) return [];
  const query = await engineQuery(
    {
      pattern: '',
      regex: false,
      caseSensitive: true,
      include: [],
      exclude: [],
      contextLines: 0,
      maxMatches: 1,
      maxFileBytes: 1,
      budgetMs: 1,
      ...spec,
    },
    Date.now(),
  );
  return covered(query, unsaved);
}

/** findFiles with the files that exist only in an editor. */
export async function findWithBuffers(
  spec: FindSpec,
  buffers: readonly BufferText[],
  options: { rgPath?: string | null; signal?: AbortSignal } = {},
): Promise<{ paths: string[]; total: number }> {
  const extra = (await newFiles(spec, buffers)).map((b) => b.path);
  const matches = globTest([spec.glob]);
  const added = extra.filter((path) => matches === null || matches(fromBase(spec.base, path)));
  if (added.length === 0) return findFiles(spec, options);
  // The whole list, so that an added file takes its place in path order within the cap.
  const disk = await findFiles({ ...spec, max: Number.MAX_SAFE_INTEGER }, options);
  const all = [...new Set([...disk.paths, ...added])].sort(comparePaths);
  return { paths: all.slice(0, spec.max), total: all.length };
}

/** listTree with buffer sizes and the files that exist only in an editor (in a folder the listing shows). */
export async function treeWithBuffers(spec: TreeSpec, buffers: readonly BufferText[]): Promise<{ entries: TreeEntry[]; more: number }> {
  const listed = await listTree(spec);
  if (buffers.length === 0) return listed;
  const mine = buffers.filter((b) => under(spec.base, b.path));
  const size = new Map(mine.map((b) => [fromBase(spec.base, b.path), new TextEncoder().encode(b.text).length]));
  const entries = listed.entries.map((e) => (e.kind === 'file' && size.has(e.path) ? { ...e, size: size.get(e.path)! } : e));
  const folders = new Set(entries.filter((e) => e.kind === 'dir' && !e.ignored && e.depth < spec.depth).map((e) => e.path));
  let more = listed.more;
  for (const buffer of await newFiles(spec, mine)) {
    const path = fromBase(spec.base, buffer.path);
    const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    if (parent !== '' && !folders.has(parent)) continue;
    if (entries.some((e) => e.path === path)) continue;
    if (entries.length >= spec.maxEntries) more++;
    else entries.push({ path, depth: path.split('/').length, kind: 'file', ignored: false, size: size.get(path)! });
  }
  return { entries: entries.sort((a, b) => comparePaths(a.path, b.path)), more };
}
