import { accessSync, constants } from 'node:fs';
import * as nodePath from 'node:path';
import type { SearchFileHits, SearchStop } from '../../../core/ports';
import { engineQuery, type SearchSpec } from './engine-query';
import { HitCollector } from './hits';
import { nodeSearch } from './node-engine';
import { ripgrepSearch } from './rg-engine';

export { listTree, findFiles } from './listing';
export { PatternError, type SearchSpec } from './engine-query';
export { PatternTimeoutError } from './regex-worker';

/** Files larger than this are skipped unread by every engine. */
export const MAX_SEARCH_FILE_BYTES = 1024 * 1024;
/** A search that takes longer stops and says how far it got. */
export const SEARCH_BUDGET_MS = 20_000;

export interface SearchOutcome {
  readonly engine: 'ripgrep' | 'node';
  /** Paths relative to the searched root. */
  readonly files: readonly SearchFileHits[];
  readonly matches: number;
  readonly stopped?: SearchStop;
}

/**
 * Searches with ripgrep when `rgPath` is given (and it can run the pattern), else with the Node
 * fallback; both visit the same files in the same order and answer alike.
 */
export async function searchText(spec: SearchSpec, options: { rgPath: string | null; signal?: AbortSignal }): Promise<SearchOutcome> {
  const signal = options.signal ?? new AbortController().signal;
  const run = async (engine: 'ripgrep' | 'node'): Promise<SearchOutcome | null> => {
    const query = await engineQuery(spec, Date.now());
    const collector = new HitCollector(spec.maxMatches);
    if (engine === 'ripgrep') {
      const outcome = await ripgrepSearch(options.rgPath!, query, collector, signal);
      if (outcome !== 'searched') return null;
    } else await nodeSearch(query, collector, signal);
    // A cancelled search is not an answer: its partial hits would read as complete.
    if (signal.aborted) throw new Error('the search was cancelled');
    return { engine, files: collector.files, matches: collector.matches, ...(collector.stopped ? { stopped: collector.stopped } : {}) };
  };
  if (options.rgPath !== null) {
    // A pattern ripgrep's linear-time engine does not take (look-around, back-references) goes to the fallback, which is time-boxed.
    const found = await run('ripgrep').catch((error: Error) => (/could not run/.test(error.message) ? null : Promise.reject(error)));
    if (found !== null) return found;
  }
  return (await run('node'))!;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `rg` on PATH (absolute folders only: a relative entry would let the workspace supply it). */
export function ripgrepOnPath(env: NodeJS.ProcessEnv = process.env): string | null {
  const name = process.platform === 'win32' ? 'rg.exe' : 'rg';
  for (const dir of (env['PATH'] ?? '').split(nodePath.delimiter)) {
    if (!nodePath.isAbsolute(dir)) continue;
    const candidate = nodePath.join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return null;
}

/** Where VS Code keeps its ripgrep, relative to `vscode.env.appRoot` (older and newer layouts, packed or not). */
export function ripgrepCandidates(appRoot: string): string[] {
  const name = process.platform === 'win32' ? 'rg.exe' : 'rg';
  const platform = `${process.platform}-${process.arch}`;
  return ['node_modules', 'node_modules.asar.unpacked'].flatMap((modules) => [
    nodePath.join(appRoot, modules, '@vscode', 'ripgrep', 'bin', name),
    nodePath.join(appRoot, modules, '@vscode', 'ripgrep-universal', 'bin', platform, name),
    nodePath.join(appRoot, modules, 'vscode-ripgrep', 'bin', name),
  ]);
}

/** The ripgrep VS Code ships, or null. */
export function ripgrepUnderAppRoot(appRoot: string): string | null {
  return ripgrepCandidates(appRoot).find(executable) ?? null;
}
