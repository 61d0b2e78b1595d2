import { promises as fs, type Dirent } from 'node:fs';
import * as nodePath from 'node:path';
import { ALWAYS_SKIPPED, excludedByGlob, IgnoreRules, type PathFilter } from './filters';

// The folder walk every Node engine shares: entries sorted by name (so paths come in the order
// ripgrep's `--sort path` gives), ignored and excluded folders not entered, symbolic links and
// anything that is not a plain file or folder left out. Folders are read in parallel.

/** Path order: component by component, as ripgrep sorts (`a/x` comes before `a.txt`). */
export function comparePaths(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
  }
  return pa.length - pb.length;
}

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export async function readSorted(abs: string): Promise<Dirent[]> {
  try {
    const entries = await fs.readdir(abs, { withFileTypes: true });
    return entries.filter((e) => e.name !== ALWAYS_SKIPPED).sort(byName);
  } catch {
    // A folder that vanished or cannot be read is skipped, as ripgrep does.
    return [];
  }
}

/** Files (root-relative paths) under filter.base, in path order, ignore files and excludes honoured. */
export async function listFiles(filter: PathFilter, signal?: AbortSignal): Promise<string[]> {
  const out: string[] = [];
  const visit = async (dir: string): Promise<string[][]> => {
    if (signal?.aborted) return [];
    const abs = dir === '' ? filter.ignore.rootAbs : nodePath.join(filter.ignore.rootAbs, dir);
    const entries = await readSorted(abs);
    const chain = await filter.ignore.chainOf(dir, new Set(entries.map((e) => e.name)));
    const parts = entries.map(async (entry): Promise<string[][]> => {
      const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
      const isDir = entry.isDirectory();
      if (!isDir && !entry.isFile()) return [];
      if (excludedByGlob(filter, relative) || IgnoreRules.verdict(chain, relative, isDir)) return [];
      return isDir ? visit(relative) : [[relative]];
    });
    return (await Promise.all(parts)).flat();
  };
  for (const group of await visit(filter.base)) out.push(...group);
  return out;
}
