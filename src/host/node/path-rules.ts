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

export function isInside(child: string, parent: string): boolean {
  const rel = nodePath.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !nodePath.isAbsolute(rel));
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
      return nodePath.join(realpathSync.native(current), ...missing.reverse());
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

/** The path rules of a set of workspace folders and the store folder. */
export class WorkspacePaths {
  private folderList: Folder[] | undefined;
  private storeReal: string | undefined;

  constructor(
    readonly roots: readonly string[],
    private readonly storeDir: string | undefined,
  ) {}

  /** The workspace folders: the path given, its real path after symlinks, its name. */
  folders(): Folder[] {
    this.folderList ??= this.roots.map((path) => ({ path, real: realpathOfDeepest(path), name: nodePath.basename(path) }));
    return this.folderList;
  }

  private store(): string | undefined {
    if (this.storeDir === undefined) return undefined;
    this.storeReal ??= realpathOfDeepest(nodePath.resolve(this.storeDir));
    return this.storeReal;
  }

  /** The absolute path a workspace path names, before symlinks; throws PathRefusedError. */
  lexical(input: string): string {
    const folders = this.folders();
    const slashed = input.replace(/\\/g, '/');
    if (nodePath.isAbsolute(slashed)) {
      const absolute = nodePath.resolve(slashed);
      if (!folders.some((f) => isInside(absolute, f.path) || isInside(absolute, f.real)))
        throw new PathRefusedError(input, 'absolute path outside every workspace folder');
      return absolute;
    }
    const [first, ...rest] = slashed.split('/');
    const named = folders.length > 1 ? folders.find((f) => f.name === first) : undefined;
    const folder = named ?? folders[0];
    if (!folder) throw new PathRefusedError(input, 'no workspace folder is open');
    const absolute = nodePath.resolve(folder.path, named ? rest.join('/') : slashed);
    if (!isInside(absolute, folder.path)) throw new PathRefusedError(input, '`..` escapes the workspace folder');
    return absolute;
  }

  /**
   * Applies every rule, and for a path about to be written (created or replaced) refuses a name
   * Windows refuses, as the name is given and as it resolves; throws PathRefusedError.
   */
  async resolveForWrite(input: string): Promise<ResolvedPath> {
    const resolved = await this.resolve(input);
    const folders = this.folders().flatMap((f) => [f.path, f.real]);
    const within = (path: string): string[] => folders.filter((at) => isInside(path, at)).map((at) => nodePath.relative(at, path));
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
      real = realpathOfDeepest(absolute);
    } catch (error) {
      if (error instanceof DanglingLinkError) throw new PathRefusedError(input, `goes through a symlink that dangles (${error.link})`);
      throw error;
    }
    const folder = folders.find((f) => isInside(real, f.real));
    if (!folder) throw new PathRefusedError(input, `resolves (symlinks followed) to ${real}, outside every workspace folder`);
    const rel = nodePath.relative(folder.real, real).split(nodePath.sep).join('/');
    if ([...segmentsOf(rel), ...segmentsOf(input)].includes('.git')) throw new PathRefusedError(input, '`.git/` is never touched');
    const store = this.store();
    if (store !== undefined && (isInside(real, store) || isInside(absolute, store)))
      throw new PathRefusedError(input, 'inside the checkpoint store');
    const inFirst = folder === folders[0];
    const relative = rel === '' ? (inFirst ? ROOT_PATH : folder.name) : inFirst ? rel : `${folder.name}/${rel}`;
    return { relative, lexical: absolute, real, isFolder: rel === '' };
  }
}
