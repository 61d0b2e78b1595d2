import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';

// Which paths a search, a file find or a listing leaves out: the ignore files of the folder
// (gitignore semantics, from the workspace folder down) and globs. One module for every engine,
// so ripgrep and the Node fallback agree on what is searched.

/** Ignore files read in each folder, lowest precedence first (ripgrep reads the same ones). */
export const IGNORE_FILES = ['.gitignore', '.ignore', '.rgignore'] as const;

/** Never listed, searched or found: the repository's own store. */
export const ALWAYS_SKIPPED = '.git';

/** A path test: true when the root-relative path (forward slashes) is matched. */
export type PathTest = (relative: string) => boolean;

/**
 * Globs with the meaning they have in a .gitignore or a ripgrep `-g`: one without "/" matches
 * the name at any depth; one with "/" matches the path from the base folder. Dot files match.
 */
export function globTest(globs: readonly string[]): PathTest | null {
  const cleaned = globs.map((g) => g.trim().replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '')).filter((g) => g !== '');
  if (cleaned.length === 0) return null;
  const tests = cleaned.map((glob) => picomatch(glob, { dot: true, basename: !glob.includes('/') }));
  return (relative) => tests.some((t) => t(relative));
}

/** The path and each of its parent folders, shortest first: `a`, `a/b`, `a/b/c.txt`. */
export function prefixes(relative: string): string[] {
  const parts = relative.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** True when the path or one of its parent folders is matched (an excluded folder excludes what it holds). */
export function matchesOrInside(test: PathTest | null, relative: string): boolean {
  return test !== null && prefixes(relative).some(test);
}

/** The ignore files of one folder, with the folder (root-relative) their patterns are relative to. */
interface FolderRules {
  readonly dir: string;
  readonly rules: readonly Ignore[];
}

/** The rules that apply inside a folder: those of every folder from the root down to it. */
export type RuleChain = readonly FolderRules[];

/**
 * The ignore files of one workspace folder, read lazily and cached: `.git/info/exclude` of the
 * folder, then in every folder from the root down `.gitignore`, `.ignore`, `.rgignore`; the
 * deepest decisive rule wins, and nothing under an ignored folder comes back.
 */
export class IgnoreRules {
  private readonly chains = new Map<string, Promise<RuleChain>>();

  /**
   * @param floor Folder whose ancestors' rules do not count: a folder that is itself ignored
   * (node_modules) but was asked for by name is searched by its own rules and those below it.
   */
  constructor(
    readonly rootAbs: string,
    private readonly floor = '',
  ) {}

  /** The rule chain of a root-relative folder ('' for the root); `names`, the folder's entries when known, spares looking for absent ignore files. */
  chainOf(dir: string, names?: ReadonlySet<string>): Promise<RuleChain> {
    let found = this.chains.get(dir);
    if (found === undefined && this.floor !== '' && dir.length < this.floor.length) found = Promise.resolve([]);
    if (found === undefined) {
      const parent = dir === '' ? null : dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
      found = Promise.all([parent === null ? [] : this.chainOf(parent), this.load(dir, names)]).then(([above, own]) =>
        own.rules.length === 0 ? above : [...above, own],
      );
      this.chains.set(dir, found);
    }
    return found;
  }

  private async load(dir: string, present?: ReadonlySet<string>): Promise<FolderRules> {
    const abs = dir === '' ? this.rootAbs : nodePath.join(this.rootAbs, dir);
    const own = IGNORE_FILES.filter((name) => present === undefined || present.has(name));
    const names = dir === '' ? [nodePath.join(ALWAYS_SKIPPED, 'info', 'exclude'), ...own] : own;
    if (names.length === 0) return { dir, rules: [] };
    const texts = await Promise.all(names.map((name) => readSmallText(nodePath.join(abs, name))));
    return {
      dir,
      rules: texts.filter((t): t is string => t !== null).map((t) => ignore({ allowRelativePaths: true, ignoreCase: false }).add(t)),
    };
  }

  /** Whether an entry of the folder the chain belongs to is ignored by the rules above it. */
  static verdict(chain: RuleChain, relative: string, isDir: boolean): boolean {
    let ignored = false;
    for (const folder of chain) {
      const rest = (folder.dir === '' ? relative : relative.slice(folder.dir.length + 1)) + (isDir ? '/' : '');
      for (const rules of folder.rules) {
        const verdict = rules.test(rest);
        if (verdict.ignored) ignored = true;
        else if (verdict.unignored) ignored = false;
      }
    }
    return ignored;
  }

  /**
   * A path seen from outside a walk (a ripgrep hit): ignored itself or inside an ignored folder
   * below `base`. The base folder itself was asked for by name, so it is searched (as a walk does).
   */
  async pathIgnored(relative: string, base: string, isDir = false): Promise<boolean> {
    const all = prefixes(relative);
    for (const [i, prefix] of all.entries()) {
      if (base !== '' && prefix.length <= base.length) continue;
      const parent = i === 0 ? '' : all[i - 1]!;
      if (IgnoreRules.verdict(await this.chainOf(parent), prefix, isDir || i < all.length - 1)) return true;
    }
    return false;
  }
}

const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/** A small regular file's text, or null (missing, not regular, too large). */
async function readSmallText(path: string): Promise<string | null> {
  try {
    const stats = await fs.lstat(path);
    if (!stats.isFile() || stats.size > MAX_IGNORE_FILE_BYTES) return null;
    return await fs.readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/** What one walk leaves out: ignore rules, exclude globs of the query (relative to its folder) and of the host (relative to the root). */
export interface PathFilter {
  readonly ignore: IgnoreRules;
  /** Folder the query is about, root-relative ('' for the root). */
  readonly base: string;
  readonly exclude: PathTest | null;
  readonly hostExclude: PathTest | null;
}

/** Path relative to the query's folder. */
export function fromBase(base: string, relative: string): string {
  return base === '' ? relative : relative.slice(base.length + 1);
}

/** Excluded by a glob (not an ignore file): the path, root-relative. */
export function excludedByGlob(filter: PathFilter, relative: string): boolean {
  if (matchesOrInside(filter.hostExclude, relative)) return true;
  return matchesOrInside(filter.exclude, fromBase(filter.base, relative));
}
