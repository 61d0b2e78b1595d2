import { promises as fs, type Dirent } from 'node:fs';
import * as nodePath from 'node:path';
import type { TreeEntry } from '../../../core/ports';
import { excludedByGlob, fromBase, globTest, IgnoreRules, type PathFilter } from './filters';
import { filterOf } from './engine-query';
import { ripgrepFiles } from './rg-engine';
import { comparePaths, listFiles, readSorted } from './walk';

// find_files and list_dir over the same walk and the same ignore rules as the search.

export interface FindSpec {
  readonly rootAbs: string;
  readonly base: string;
  readonly glob: string;
  readonly exclude: readonly string[];
  readonly hostExclude?: readonly string[];
  readonly skip?: string;
  readonly max: number;
}

/**
 * Files whose path (from the base) matches the glob, in path order: the first `max`, and how many
 * in all. With ripgrep its walk lists the tree and only the glob's matches go through the shared
 * filter and the sort; else the Node walk.
 */
export async function findFiles(
  spec: FindSpec,
  options: { rgPath?: string | null; signal?: AbortSignal } = {},
): Promise<{ paths: string[]; total: number }> {
  const filter = await filterOf(spec.rootAbs, spec.base, spec.exclude, spec.hostExclude, spec.skip);
  const glob = globTest([spec.glob]);
  const matches = (path: string): boolean => glob === null || glob(fromBase(spec.base, path));
  const listed = options.rgPath ? await ripgrepFiles(options.rgPath, filter, options.signal, literalName(spec.glob)) : null;
  const found =
    listed === null
      ? (await listFiles(filter, options.signal)).filter(matches)
      : (await keep(listed.filter(matches), (path) => walkedPath(filter, path))).sort(comparePaths);
  return { paths: found.slice(0, spec.max), total: found.length };
}

/** The file name a glob ends in when that part is plain text (package.json at any depth): every match has that name. */
function literalName(glob: string): string | undefined {
  const name = glob.trim().replace(/\\/g, '/').replace(/\/+$/, '').split('/').pop() ?? '';
  return name !== '' && !glob.includes('{') && !/[*?[\]!]/.test(name) ? name : undefined;
}

/** Whether the walk would give this path: not excluded by a glob, not ignored below the base. */
async function walkedPath(filter: PathFilter, path: string): Promise<boolean> {
  return !excludedByGlob(filter, path) && !(await filter.ignore.pathIgnored(path, filter.base));
}

async function keep<T>(items: readonly T[], test: (item: T) => Promise<boolean>): Promise<T[]> {
  const verdicts = await Promise.all(items.map(test));
  return items.filter((_, i) => verdicts[i]);
}

export interface TreeSpec {
  readonly rootAbs: string;
  readonly base: string;
  readonly depth: number;
  readonly maxEntries: number;
  readonly hostExclude?: readonly string[];
  readonly skip?: string;
}

function kindOf(entry: Dirent): TreeEntry['kind'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'dir';
  return entry.isFile() ? 'file' : 'other';
}

/** Entries to `depth` levels in name order, each folder's entries right after it; ignored folders are listed, marked, and not entered; host-excluded ones left out. */
export async function listTree(spec: TreeSpec): Promise<{ entries: TreeEntry[]; more: number }> {
  const filter = await filterOf(spec.rootAbs, spec.base, [], spec.hostExclude, spec.skip);
  const ignore = filter.ignore;
  const entries: TreeEntry[] = [];
  let more = 0;
  const visit = async (dir: string, level: number): Promise<void> => {
    const abs = dir === '' ? spec.rootAbs : nodePath.join(spec.rootAbs, dir);
    const [children, chain] = await Promise.all([readSorted(abs), ignore.chainOf(dir)]);
    for (const child of children) {
      const relative = dir === '' ? child.name : `${dir}/${child.name}`;
      const kind = kindOf(child);
      // Hidden by the host (VS Code's excludes, the store): left out, as the explorer leaves them out.
      if (excludedByGlob(filter, relative)) continue;
      const ignored = IgnoreRules.verdict(chain, relative, kind === 'dir');
      if (entries.length >= spec.maxEntries) more++;
      else {
        const size =
          kind === 'file'
            ? await fs.lstat(nodePath.join(abs, child.name)).then(
                (s) => s.size,
                () => undefined,
              )
            : undefined;
        entries.push({ path: fromBase(spec.base, relative), depth: level, kind, ignored, ...(size !== undefined ? { size } : {}) });
      }
      if (kind === 'dir' && !ignored && level < spec.depth) await visit(relative, level + 1);
    }
  };
  await visit(spec.base, 1);
  return { entries, more };
}
