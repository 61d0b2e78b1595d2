import { lstatSync, realpathSync } from 'node:fs';
import * as nodePath from 'node:path';
import { PathRefusedError } from '../../core/ports';

// The one set of path rules every agent file access goes through, in every host (the CLI's
// NodeWorkspace, the VS Code LiveWorkspace, the timeline): inside a workspace folder after
// resolving symlinks, never through a symlink that dangles, never under `.git/`, never inside
// the checkpoint store.

// A name Windows refuses is refused for a write on every platform (a workspace may be shared
// with Windows, and a restore there would fail or, for `nul`, destroy what it meant to write).

/** Device names Windows reserves, with or without an extension (`aux.txt`, `NUL.tar.gz`). */
const RESERVED_STEM = /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])$/i;
// eslint-disable-next-line no-control-regex -- control characters are what is refused
const REFUSED_CHAR = /[<>:"|?*\u0000-\u001f]/;

/** Why Windows refuses `name` (one file or folder name) for a file, or undefined. */
export function windowsNameProblem(name: string): string | undefined {
  const char = REFUSED_CHAR.exec(name)?.[0];
  if (char === ':') return `"${name}" has ":", which names a drive or an NTFS stream on Windows`;
  if (char !== undefined) return `"${name}" has ${JSON.stringify(char)}, which Windows does not allow in a name`;
  if (name !== '.' && name !== '..' && /[. ]$/.test(name)) return `"${name}" ends with a dot or a space, which Windows drops`;
  const stem = name.split('.')[0]!.trimEnd();
  if (RESERVED_STEM.test(stem)) return `"${name}" is the device name ${stem.toUpperCase()} on Windows, not a file`;
  return undefined;
}

/** The first name in a path (`/` or `\\` between names) that Windows refuses, with the reason. */
export function windowsPathProblem(path: string): string | undefined {
  for (const name of path.split(/[\\/]/)) {
    const problem = name === '' ? undefined : windowsNameProblem(name);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The workspace-relative form of the root folder itself (what `list_dir "."` asks for). */
export const ROOT_PATH = '.';

// Paths are compared the way the platform does: on Windows with node:path's win32 functions
// (drive letters and names in any case, `/` or `\`, UNC, `\\?\` long paths). The platform is
// injectable, so tests on Linux prove the Windows rules.

export type PathPlatform = NodeJS.Platform;

/** Windows' classic limit of a full path (MAX_PATH, terminating NUL included). */
export const WINDOWS_MAX_PATH = 260;

/** node:path's functions for a platform. */
export function pathApi(platform: PathPlatform = process.platform): nodePath.PlatformPath {
  return platform === 'win32' ? nodePath.win32 : nodePath.posix;
}

/**
 * A path without Windows' long-path prefix: `\\?\C:\x` is `C:\x`, `\\?\UNC\server\share` is
 * `\\server\share` (either slash). Unchanged on other platforms.
 */
export function withoutLongPrefix(path: string, platform: PathPlatform = process.platform): string {
  if (platform !== 'win32') return path;
  const match = /^[\\/]{2}\?[\\/](UNC[\\/])?/i.exec(path);
  if (match === null) return path;
  return (match[1] !== undefined ? '\\\\' : '') + path.slice(match[0].length);
}

export function isInside(child: string, parent: string, platform: PathPlatform = process.platform): boolean {
  const api = pathApi(platform);
  const rel = api.relative(withoutLongPrefix(parent, platform), withoutLongPrefix(child, platform));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${api.sep}`) && !api.isAbsolute(rel));
}

/** Whether two absolute paths name the same place as the platform compares names (Windows: in any case). */
export function samePath(a: string, b: string, platform: PathPlatform = process.platform): boolean {
  const api = pathApi(platform);
  const [x, y] = [a, b].map((p) => api.resolve(withoutLongPrefix(p, platform)));
  return platform === 'win32' ? x!.toLowerCase() === y!.toLowerCase() : x === y;
}

/** Thrown by realpathOfDeepest for a path through a symlink whose target does not exist. */
export class DanglingLinkError extends Error {
  constructor(readonly link: string) {
    super(`${link} is a symbolic link to something that does not exist`);
    this.name = 'DanglingLinkError';
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * realpath of an existing path: the system's (on Windows and macOS the names' true case too).
 * Windows (Node for Windows under Wine 8, at least) cannot give it for an existing file past 260
 * characters (`UNKNOWN`) although it opens, writes and renames one: then the path is walked link
 * by link (fs.realpathSync), which resolves the same links and keeps the names as given.
 */
export function realpathOfExisting(
  path: string,
  system: (path: string) => string = realpathSync.native,
  platform: PathPlatform = process.platform,
): string {
  try {
    return system(path);
  } catch (error) {
    if (platform !== 'win32' || (error as NodeJS.ErrnoException).code !== 'UNKNOWN') throw error;
    return realpathSync(path);
  }
}

/**
 * realpath of the deepest existing ancestor, plus the part that does not exist yet (a file
 * about to be created). A missing part that is a dangling symlink throws DanglingLinkError: a
 * write there would follow the link and create its target, wherever it points. Synchronous: a
 * cached lookup takes microseconds, a thread-pool round trip far more.
 */
export function realpathOfDeepest(path: string): string {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return nodePath.join(realpathOfExisting(current), ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      if (isSymlink(current)) throw new DanglingLinkError(current);
      const parent = nodePath.dirname(current);
      if (parent === current) return path;
      missing.push(nodePath.basename(current));
      current = parent;
    }
  }
}

export interface Folder {
  readonly path: string;
  readonly real: string;
  readonly name: string;
}

export interface ResolvedPath {
  /** Workspace-relative, forward slashes; `folderName/...` outside the first folder. */
  readonly relative: string;
  /** Absolute path as the user names it (before symlinks). */
  readonly lexical: string;
  /** Absolute path with every symlink resolved. */
  readonly real: string;
  /** True when the path is a workspace folder itself. */
  readonly isFolder: boolean;
}

function segmentsOf(path: string): string[] {
  return path
    .replace(/\\/g, '/')
    .split('/')
    .map((s) => s.toLowerCase());
}

export interface WorkspacePathsOptions {
  /** Whose path rules apply; this process's platform by default. */
  readonly platform?: PathPlatform;
  /** realpathOfDeepest by default; a test of another platform's rules passes that platform's. */
  readonly realpath?: (path: string) => string;
}

/** The path rules of a set of workspace folders and the store folder. */
export class WorkspacePaths {
  private folderList: Folder[] | undefined;
  private storeReal: string | undefined;
  private readonly platform: PathPlatform;
  private readonly api: nodePath.PlatformPath;
  private readonly realpath: (path: string) => string;

  constructor(
    readonly roots: readonly string[],
    private readonly storeDir: string | undefined,
    options: WorkspacePathsOptions = {},
  ) {
    this.platform = options.platform ?? process.platform;
    this.api = pathApi(this.platform);
    this.realpath = options.realpath ?? realpathOfDeepest;
  }

  private inside(child: string, parent: string): boolean {
    return isInside(child, parent, this.platform);
  }

  /** The workspace folders: the path given, its real path after symlinks, its name. */
  folders(): Folder[] {
    this.folderList ??= this.roots.map((given) => {
      const path = this.api.resolve(withoutLongPrefix(given, this.platform));
      return { path, real: this.realpath(path), name: this.api.basename(path) };
    });
    return this.folderList;
  }

  private store(): string | undefined {
    if (this.storeDir === undefined) return undefined;
    this.storeReal ??= this.realpath(this.api.resolve(withoutLongPrefix(this.storeDir, this.platform)));
    return this.storeReal;
  }

  /** The workspace folder a multi-root path names first (`lib/x.ts`), in any case on Windows. */
  private named(first: string | undefined): Folder | undefined {
    const folders = this.folders();
    if (folders.length < 2 || first === undefined) return undefined;
    const fold = (name: string): string => (this.platform === 'win32' ? name.toLowerCase() : name);
    return folders.find((f) => fold(f.name) === fold(first));
  }

  /** The absolute path a workspace path names, before symlinks; throws PathRefusedError. */
  lexical(input: string): string {
    const folders = this.folders();
    const slashed = withoutLongPrefix(input, this.platform).replace(/\\/g, '/');
    if (this.api.isAbsolute(slashed)) {
      const absolute = this.api.resolve(slashed);
      if (!folders.some((f) => this.inside(absolute, f.path) || this.inside(absolute, f.real)))
        throw new PathRefusedError(input, 'absolute path outside every workspace folder');
      return absolute;
    }
    const [first, ...rest] = slashed.split('/');
    const named = this.named(first);
    const folder = named ?? folders[0];
    if (!folder) throw new PathRefusedError(input, 'no workspace folder is open');
    const absolute = this.api.resolve(folder.path, named ? rest.join('/') : slashed);
    if (!this.inside(absolute, folder.path)) throw new PathRefusedError(input, '`..` escapes the workspace folder');
    return absolute;
  }

  /**
   * The inverse of `lexical`: the workspace path that names an absolute path (an editor's file),
   * in the journal's form (`x.ts` in the first folder, `folderName/x.ts` in another). Undefined
   * for a path outside every folder, a folder itself, one under `.git/` or the store, and one the
   * rules would read as another file (a first-folder path that begins with another folder's name).
   */
  workspacePathOf(absolute: string): string | undefined {
    const folders = this.folders();
    const path = this.api.resolve(withoutLongPrefix(absolute, this.platform));
    const folder = folders.find((f) => this.inside(path, f.path));
    const store = this.store();
    if (!folder || (store !== undefined && this.inside(path, store))) return undefined;
    const rel = this.api.relative(folder.path, path).split(this.api.sep).join('/');
    if (rel === '' || segmentsOf(rel).includes('.git')) return undefined;
    const relative = folder === folders[0] ? rel : `${folder.name}/${rel}`;
    return samePath(this.lexical(relative), path, this.platform) ? relative : undefined;
  }

  /**
   * Applies every rule, and for a path about to be written (created or replaced) refuses a name
   * Windows refuses, as the name is given and as it resolves; throws PathRefusedError.
   */
  async resolveForWrite(input: string): Promise<ResolvedPath> {
    const resolved = await this.resolve(input);
    const folders = this.folders().flatMap((f) => [f.path, f.real]);
    const within = (path: string): string[] => folders.filter((at) => this.inside(path, at)).map((at) => this.api.relative(at, path));
    for (const rel of [...within(resolved.lexical), ...within(resolved.real)]) {
      const problem = windowsPathProblem(rel);
      if (problem !== undefined)
        throw new PathRefusedError(
          input,
          `${problem}; Windows refuses this name, so it is never written (a workspace may be shared with Windows)`,
        );
    }
    return resolved;
  }

  /** Applies every rule; throws PathRefusedError with the reason. */
  async resolve(input: string): Promise<ResolvedPath> {
    if (input.length === 0 || input.includes('\0')) throw new PathRefusedError(input, 'empty path or NUL in path');
    const folders = this.folders();
    const absolute = this.lexical(input);
    let real: string;
    try {
      real = this.realpath(absolute);
    } catch (error) {
      if (error instanceof DanglingLinkError) throw new PathRefusedError(input, `goes through a symlink that dangles (${error.link})`);
      if (this.platform === 'win32' && absolute.length >= WINDOWS_MAX_PATH)
        throw new PathRefusedError(
          input,
          `is ${absolute.length} characters long as a full path, and this Windows refused it (${(error as NodeJS.ErrnoException).code ?? 'error'}): paths of ${WINDOWS_MAX_PATH} characters or more need long paths enabled (LongPathsEnabled, Windows 10 1607 or later); use a shorter path`,
          { cause: error },
        );
      throw error;
    }
    const folder = folders.find((f) => this.inside(real, f.real));
    if (!folder) throw new PathRefusedError(input, `resolves (symlinks followed) to ${real}, outside every workspace folder`);
    // The one canonical form a journal stores: relative to the folder, forward slashes.
    const rel = this.api.relative(folder.real, real).split(this.api.sep).join('/');
    if ([...segmentsOf(rel), ...segmentsOf(input)].includes('.git')) throw new PathRefusedError(input, '`.git/` is never touched');
    const store = this.store();
    if (store !== undefined && (this.inside(real, store) || this.inside(absolute, store)))
      throw new PathRefusedError(input, 'inside the checkpoint store');
    const inFirst = folder === folders[0];
    const relative = rel === '' ? (inFirst ? ROOT_PATH : folder.name) : inFirst ? rel : `${folder.name}/${rel}`;
    return { relative, lexical: absolute, real, isFolder: rel === '' };
  }
}
