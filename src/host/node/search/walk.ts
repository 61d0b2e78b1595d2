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

/** The files of one folder's subtree, in path order (its subfolders read in parallel). */
async function subtree(filter: PathFilter, dir: string, signal?: AbortSignal): Promise<string[]> {
  return (await Promise.all(await entriesOf(filter, dir, signal))).flat();
}

/** One promise per entry of a folder, in name order: a file's own path, or a subfolder's files. */
async function entriesOf(filter: PathFilter, dir: string, signal?: AbortSignal): Promise<Promise<string[]>[]> {
  if (signal?.aborted) return [];
  const abs = dir === '' ? filter.ignore.rootAbs : nodePath.join(filter.ignore.rootAbs, dir);
  const entries = await readSorted(abs);
  const chain = await filter.ignore.chainOf(dir, new Set(entries.map((e) => e.name)));
  const out: Promise<string[]>[] = [];
  for (const entry of entries) {
    const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
    const isDir = entry.isDirectory();
    if (!isDir && !entry.isFile()) continue;
    if (excludedByGlob(filter, relative) || IgnoreRules.verdict(chain, relative, isDir)) continue;
    out.push(isDir ? subtree(filter, relative, signal) : Promise.resolve([relative]));
  }
  return out;
}

/**
 * Files (root-relative paths) under filter.base in path order, ignore files and excludes
 * honoured, a group at a time: every subfolder of the base is walked at once, and the groups
 * come in order as soon as each is complete, so a search can start before the walk ends.
 */
export async function* walkGroups(filter: PathFilter, signal?: AbortSignal): AsyncGenerator<string[]> {
  for (const group of await entriesOf(filter, filter.base, signal)) yield await group;
}

/** Every file of walkGroups, in one list. */
export async function listFiles(filter: PathFilter, signal?: AbortSignal): Promise<string[]> {
  const out: string[] = [];
  for await (const group of walkGroups(filter, signal)) out.push(...group);
  return out;
}
