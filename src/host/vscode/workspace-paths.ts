import * as nodePath from 'node:path';
import { PathRefusedError } from '../../core/ports';
import { isInside, realpathOfDeepest } from '../node/path-rules';

/** The workspace-relative form of the root folder itself (what `list_dir "."` asks for). */
export const ROOT_PATH = '.';

interface Folder {
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
}

/**
 * The path rules every agent file access goes through: inside a workspace folder after
 * resolving symlinks, never under `.git/`, never inside the checkpoint store.
 */
export class WorkspacePaths {
  private folders: Promise<Folder[]> | undefined;
  private storeReal: Promise<string | undefined> | undefined;

  constructor(
    readonly roots: readonly string[],
    private readonly storeDir: string | undefined,
  ) {}

  private resolvedFolders(): Promise<Folder[]> {
    this.folders ??= Promise.all(this.roots.map(async (path) => ({ path, real: realpathOfDeepest(path), name: nodePath.basename(path) })));
    return this.folders;
  }

  private resolvedStore(): Promise<string | undefined> {
    this.storeReal ??=
      this.storeDir === undefined ? Promise.resolve(undefined) : Promise.resolve(realpathOfDeepest(nodePath.resolve(this.storeDir)));
    return this.storeReal;
  }

  private lexical(input: string, folders: Folder[]): { absolute: string; folder: Folder } {
    const slashed = input.replace(/\\/g, '/');
    if (nodePath.isAbsolute(slashed)) {
      const absolute = nodePath.resolve(slashed);
      const folder = folders.find((f) => isInside(absolute, f.path) || isInside(absolute, f.real));
      if (!folder) throw new PathRefusedError(input, 'absolute path outside every workspace folder');
      return { absolute, folder };
    }
    const [first, ...rest] = slashed.split('/');
    const named = folders.length > 1 ? folders.find((f) => f.name === first) : undefined;
    const folder = named ?? folders[0];
    if (!folder) throw new PathRefusedError(input, 'no workspace folder is open');
    const absolute = nodePath.resolve(folder.path, named ? rest.join('/') : slashed);
    if (!isInside(absolute, folder.path)) throw new PathRefusedError(input, '`..` escapes the workspace folder');
    return { absolute, folder };
  }

  async resolve(input: string): Promise<ResolvedPath> {
    if (input.length === 0 || input.includes('\0')) throw new PathRefusedError(input, 'empty path or NUL in path');
    const folders = await this.resolvedFolders();
    const { absolute } = this.lexical(input, folders);
    const real = realpathOfDeepest(absolute);
    const folder = folders.find((f) => isInside(real, f.real));
    if (!folder) throw new PathRefusedError(input, `resolves (symlinks followed) to ${real}, outside every workspace folder`);
    const rel = nodePath.relative(folder.real, real).split(nodePath.sep).join('/');
    const segments = [...rel.split('/'), ...input.replace(/\\/g, '/').split('/')];
    if (segments.includes('.git')) throw new PathRefusedError(input, '`.git/` is never touched');
    const store = await this.resolvedStore();
    if (store !== undefined && (isInside(real, store) || isInside(absolute, store)))
      throw new PathRefusedError(input, 'inside the checkpoint store');
    const inFirst = folder === folders[0];
    const relative = rel === '' ? (inFirst ? ROOT_PATH : folder.name) : inFirst ? rel : `${folder.name}/${rel}`;
    return { relative, lexical: absolute, real };
  }
}
