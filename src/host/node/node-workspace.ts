import { randomBytes } from 'node:crypto';
import { promises as fs, type Stats } from 'node:fs';
import * as nodePath from 'node:path';
import { ABSENT, hashContent } from '../../core/patches/hash';
import { PathRefusedError, StaleContentError, type DirEntry, type FileStat, type LiveFile, type Workspace } from '../../core/ports';

export interface NodeWorkspaceOptions {
  /** Absolute paths of the workspace folders; the first takes plain relative paths. */
  readonly roots: readonly string[];
  /** The extension's store folder: never readable or writable through the workspace. */
  readonly storeDir?: string;
}

interface Root {
  readonly path: string;
  readonly real: string;
  readonly name: string;
}

function isInside(child: string, parent: string): boolean {
  const rel = nodePath.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !nodePath.isAbsolute(rel));
}

async function realpathOfDeepest(path: string): Promise<string> {
  const pending: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = await fs.realpath(current);
      return nodePath.join(real, ...pending.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error;
      const parent = nodePath.dirname(current);
      if (parent === current) return path;
      pending.push(nodePath.basename(current));
      current = parent;
    }
  }
}

function kindOf(entry: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): DirEntry['kind'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFile()) return 'file';
  return entry.isDirectory() ? 'dir' : 'other';
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The workspace over Node fs (CLI, tests): disk is the live content; writes are durable. */
export class NodeWorkspace implements Workspace {
  readonly roots: readonly string[];
  private resolvedRoots: Promise<Root[]> | undefined;

  constructor(private readonly options: NodeWorkspaceOptions) {
    if (options.roots.length === 0) throw new Error('NodeWorkspace needs at least one root');
    this.roots = options.roots.map((r) => nodePath.resolve(r));
  }

  private rootsResolved(): Promise<Root[]> {
    this.resolvedRoots ??= Promise.all(this.roots.map(async (path) => ({ path, real: await fs.realpath(path), name: nodePath.basename(path) })));
    return this.resolvedRoots;
  }

  /** Absolute path (lexical) of a workspace path: relative to the first root, or `folderName/...`. */
  private async lexical(input: string, roots: Root[]): Promise<{ absolute: string; root: Root }> {
    const slashed = input.replace(/\\/g, '/');
    if (nodePath.isAbsolute(slashed)) {
      const absolute = nodePath.resolve(slashed);
      const root = roots.find((r) => isInside(absolute, r.path) || isInside(absolute, r.real));
      if (!root) throw new PathRefusedError(input, 'absolute path outside every workspace folder');
      return { absolute, root };
    }
    const [first, ...rest] = slashed.split('/');
    const named = roots.length > 1 ? roots.find((r) => r.name === first) : undefined;
    const root = named ?? roots[0]!;
    const absolute = nodePath.resolve(root.path, named ? rest.join('/') : slashed);
    if (!isInside(absolute, root.path)) throw new PathRefusedError(input, '`..` escapes the workspace folder');
    return { absolute, root };
  }

  async normalize(input: string): Promise<string> {
    return (await this.resolve(input)).relative;
  }

  private async resolve(input: string): Promise<{ relative: string; absolute: string }> {
    if (input.length === 0 || input.includes('\0')) throw new PathRefusedError(input, 'empty or NUL in path');
    const roots = await this.rootsResolved();
    const { absolute } = await this.lexical(input, roots);
    const real = await realpathOfDeepest(absolute);
    const root = roots.find((r) => isInside(real, r.real));
    if (!root) throw new PathRefusedError(input, `resolves (symlinks followed) to ${real}, outside every workspace folder`);
    const rel = nodePath.relative(root.real, real).split(nodePath.sep).join('/');
    if (rel === '') throw new PathRefusedError(input, 'is a workspace folder itself, not a file');
    if (rel.split('/').includes('.git') || input.replace(/\\/g, '/').split('/').includes('.git')) throw new PathRefusedError(input, '`.git/` is never touched');
    if (this.options.storeDir !== undefined) {
      const store = await realpathOfDeepest(nodePath.resolve(this.options.storeDir));
      if (isInside(real, store)) throw new PathRefusedError(input, 'inside the checkpoint store');
    }
    const relative = root === roots[0] ? rel : `${root.name}/${rel}`;
    return { relative, absolute: real };
  }

  async read(path: string): Promise<LiveFile | null> {
    const { relative, absolute } = await this.resolve(path);
    const bytes = await readOrNull(absolute);
    if (bytes === null) return null;
    return { path: relative, bytes, hash: hashContent(bytes), source: 'disk', dirty: false };
  }

  private async expectHash(path: string, absolute: string, expected: string): Promise<fsStatsOrNull> {
    const stats: fsStatsOrNull = await fs.stat(absolute).catch(nullOnMissing);
    const bytes = stats === null ? null : await readOrNull(absolute);
    const actual = bytes === null ? ABSENT : hashContent(bytes);
    if (actual !== expected) throw new StaleContentError(path, expected, actual);
    return stats;
  }

  async write(path: string, bytes: Uint8Array, expectedBeforeHash: string): Promise<LiveFile> {
    const { relative, absolute } = await this.resolve(path);
    const stats = await this.expectHash(relative, absolute, expectedBeforeHash);
    const dir = nodePath.dirname(absolute);
    await fs.mkdir(dir, { recursive: true });
    const temp = nodePath.join(dir, `.${nodePath.basename(absolute)}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await fs.open(temp, 'wx', stats ? stats.mode & 0o7777 : 0o666);
    try {
      await handle.writeFile(bytes);
      if (stats) await handle.chmod(stats.mode & 0o7777);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(temp, absolute);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
    await fsyncDir(dir);
    return { path: relative, bytes, hash: hashContent(bytes), source: 'disk', dirty: false };
  }

  async delete(path: string, expectedBeforeHash: string): Promise<void> {
    const { relative, absolute } = await this.resolve(path);
    await this.expectHash(relative, absolute, expectedBeforeHash);
    await fs.unlink(absolute);
    await fsyncDir(nodePath.dirname(absolute));
  }

  async list(dir: string): Promise<DirEntry[]> {
    const absolute = dir === '' || dir === '.' ? (await this.rootsResolved())[0]!.real : (await this.resolve(dir)).absolute;
    const entries = await fs.readdir(absolute, { withFileTypes: true });
    return entries.filter((e) => e.name !== '.git').map((e) => ({ name: e.name, kind: kindOf(e) }));
  }

  async stat(path: string): Promise<FileStat | null> {
    const { absolute } = await this.resolve(path);
    const stats = await fs.lstat(absolute).catch(nullOnMissing);
    if (stats === null) return null;
    return { kind: kindOf(stats), size: stats.size, mtimeMs: stats.mtimeMs };
  }
}

type fsStatsOrNull = Stats | null;

function nullOnMissing(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT') return null;
  throw error;
}

async function readOrNull(absolute: string): Promise<Uint8Array | null> {
  try {
    return new Uint8Array(await fs.readFile(absolute));
  } catch (error) {
    return nullOnMissing(error as NodeJS.ErrnoException);
  }
}
