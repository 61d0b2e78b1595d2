import * as nodePath from 'node:path';
import type { FileList, FileQuery, TextSearchQuery, TextSearchResult, TreeListing, TreeQuery } from '../../../core/ports';
import { isInside, realpathOfDeepest } from '../path-rules';
import { findWithBuffers, searchWithBuffers, treeWithBuffers, type BufferText } from './buffers';
import { MAX_SEARCH_FILE_BYTES, SEARCH_BUDGET_MS } from './index';

// The Workspace port's search, find and tree, for any host that can name the folder on disk:
// the Node workspace (CLI, tests) and the VS Code workspace share it.

/** A workspace folder on disk and where a query's folder sits in it. */
export interface Located {
  /** The workspace folder, symlinks resolved. */
  readonly rootAbs: string;
  /** The query's folder relative to rootAbs ('' for the folder itself). */
  readonly base: string;
  /** What turns a path relative to rootAbs into a workspace path ('' for the first folder, `name/` else). */
  readonly prefix: string;
}

export interface HostSearchOptions {
  readonly rgPath: string | null;
  /** Root-relative globs the host excludes (VS Code's files.exclude and search.exclude). */
  readonly hostExclude?: readonly string[];
  /** The checkpoint store: never searched, found or listed, even when it lies inside the folder. */
  readonly storeDir?: string;
  /** Unsaved editor buffers of files under rootAbs (paths relative to it): searched, found and listed instead of the disk. */
  readonly buffers?: readonly BufferText[];
}

/** The store's folder relative to the root, when it lies inside it. */
function storeInside(at: Located, options: HostSearchOptions): string | undefined {
  if (options.storeDir === undefined) return undefined;
  const store = realpathOfDeepest(nodePath.resolve(options.storeDir));
  if (!isInside(store, at.rootAbs) || store === at.rootAbs) return undefined;
  return nodePath.relative(at.rootAbs, store).split(nodePath.sep).join('/');
}

/** What every query of the host leaves out: its exclude globs and the store. */
function hostSkips(at: Located, options: HostSearchOptions): { hostExclude: readonly string[]; skip?: string } {
  const skip = storeInside(at, options);
  return { hostExclude: options.hostExclude ?? [], ...(skip !== undefined ? { skip } : {}) };
}

export async function workspaceSearch(
  at: Located,
  query: TextSearchQuery,
  options: HostSearchOptions,
  signal?: AbortSignal,
): Promise<TextSearchResult> {
  const outcome = await searchWithBuffers(
    {
      rootAbs: at.rootAbs,
      base: at.base,
      pattern: query.pattern,
      regex: query.regex,
      caseSensitive: query.caseSensitive,
      include: query.include,
      exclude: query.exclude,
      ...hostSkips(at, options),
      contextLines: query.contextLines,
      maxMatches: query.maxMatches,
      maxFileBytes: MAX_SEARCH_FILE_BYTES,
      budgetMs: SEARCH_BUDGET_MS,
    },
    { rgPath: options.rgPath, ...(signal ? { signal } : {}) },
    options.buffers ?? [],
  );
  const stopped = outcome.stopped && {
    ...outcome.stopped,
    lastPath: outcome.stopped.lastPath === null ? null : at.prefix + outcome.stopped.lastPath,
  };
  return {
    engine: outcome.engine,
    files: outcome.files.map((f) => ({ path: at.prefix + f.path, lines: f.lines })),
    matches: outcome.matches,
    maxFileBytes: MAX_SEARCH_FILE_BYTES,
    ...(stopped ? { stopped } : {}),
  };
}

export async function workspaceFind(at: Located, query: FileQuery, options: HostSearchOptions, signal?: AbortSignal): Promise<FileList> {
  const spec = { rootAbs: at.rootAbs, base: at.base, glob: query.glob, exclude: query.exclude, ...hostSkips(at, options) };
  const found = await findWithBuffers({ ...spec, max: query.max }, options.buffers ?? [], {
    rgPath: options.rgPath,
    ...(signal ? { signal } : {}),
  });
  return { paths: found.paths.map((p) => at.prefix + p), total: found.total };
}

export async function workspaceTree(at: Located, query: TreeQuery, options: HostSearchOptions): Promise<TreeListing> {
  return treeWithBuffers(
    {
      rootAbs: at.rootAbs,
      base: at.base,
      depth: query.depth,
      maxEntries: query.maxEntries,
      ...hostSkips(at, options),
    },
    options.buffers ?? [],
  );
}
