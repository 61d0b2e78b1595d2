import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { ABSENT, hashContent } from '../../core/patches/hash';
import { isInside, WorkspacePaths } from './path-rules';
import { stagedTempName, sweepStagedTemps } from './staged-temps';
import { nullOnMissing, readInBackground, readLive, readSmallNow, stageTemp } from './live-file-io';
import { platformFs, type PlatformFs } from './platform-fs';
import { executableAt, hasFileModes, setExecutableAt } from './file-mode';
import {
  PathRefusedError,
  StaleContentError,
  type DirEntry,
  type FileList,
  type FileQuery,
  type FileStat,
  type LiveFile,
  type TextSearchQuery,
  type TextSearchResult,
  type TreeListing,
  type TreeQuery,
  type Workspace,
} from '../../core/ports';
import { ripgrepOnPath } from './search/index';
import { workspaceFind, workspaceSearch, workspaceTree, type HostSearchOptions, type Located } from './search/workspace-search';

export interface NodeWorkspaceOptions {
  /** Absolute paths of the workspace folders; the first takes plain relative paths. */
  readonly roots: readonly string[];
  /** The extension's store folder: never readable or writable through the workspace. */
  readonly storeDir?: string;
  /** ripgrep for search_text: a path, null for the Node engine only, absent for `rg` on PATH. */
  readonly ripgrep?: string | null;
  /** The platform layer of file operations (platform-fs.ts); this process's platform by default. */
  readonly platformFs?: PlatformFs;
}

function kindOf(entry: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): DirEntry['kind'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFile()) return 'file';
  return entry.isDirectory() ? 'dir' : 'other';
}

/** The workspace over Node fs (CLI, tests): disk is the live content; writes are durable. */
export class NodeWorkspace implements Workspace {
  readonly roots: readonly string[];
  private readonly paths: WorkspacePaths;
  private readonly pfs: PlatformFs;
  /** Folders this object has written into: swept of dead hosts' staged temp files once (staged-temps.ts). */
  private readonly swept = new Set<string>();
  /** The executable bit (file-mode.ts); left out on Windows, which has no file modes. */
  readonly executable?: (path: string) => Promise<boolean | null>;
  readonly setExecutable?: (path: string, executable: boolean, expected?: boolean) => Promise<void>;

  constructor(private readonly options: NodeWorkspaceOptions) {
    if (options.roots.length === 0) throw new Error('NodeWorkspace needs at least one root');
    this.pfs = options.platformFs ?? platformFs;
    this.roots = options.roots.map((r) => nodePath.resolve(r));
    this.paths = new WorkspacePaths(this.roots, options.storeDir);
    if (hasFileModes(this.pfs.platform)) {
      this.executable = async (path) => executableAt((await this.resolve(path)).absolute);
      this.setExecutable = async (path, executable, expected) => {
        const { relative, absolute } = await this.resolve(path);
        await setExecutableAt(relative, absolute, executable, expected);
      };
    }
  }

  async normalize(input: string, intent?: 'write'): Promise<string> {
    return (await this.resolve(input, intent)).relative;
  }

  /** The path rules (path-rules.ts; names Windows refuses too for a write), and a file path, not a workspace folder itself. */
  private async resolve(input: string, intent?: 'write'): Promise<{ relative: string; absolute: string }> {
    const resolved = await (intent === 'write' ? this.paths.resolveForWrite(input) : this.paths.resolve(input));
    if (resolved.isFolder) throw new PathRefusedError(input, 'is a workspace folder itself, not a file');
    return { relative: resolved.relative, absolute: resolved.real };
  }

  async read(path: string): Promise<LiveFile | null> {
    const { relative, absolute } = await this.resolve(path);
    const bytes = await readLive(absolute, this.pfs);
    if (bytes === null) return null;
    return { path: relative, bytes, hash: hashContent(bytes), source: 'disk', dirty: false };
  }

  /** Disk is the live content here: nothing is ever unsaved. */
  async isDirty(_path: string): Promise<boolean> {
    return false;
  }

  private async expectHash(path: string, absolute: string, expected: string): Promise<void> {
    throwWhenStale(path, expected, await readLive(absolute, this.pfs));
  }

  async write(path: string, bytes: Uint8Array, expectedBeforeHash: string): Promise<LiveFile> {
    return this.replace(path, bytes, expectedBeforeHash, undefined);
  }

  async writeWhenReady(path: string, bytes: Uint8Array, expectedBeforeHash: string, ready: Promise<unknown>): Promise<LiveFile> {
    return this.replace(path, bytes, expectedBeforeHash, ready);
  }

  /**
   * Temp file written, given the live file's mode and fsynced; then (after `ready`) the live
   * content checked against the expected hash right before the rename; then the folder fsynced
   * (not on Windows: platform-fs.ts).
   */
  private async replace(
    path: string,
    bytes: Uint8Array,
    expectedBeforeHash: string,
    ready: Promise<unknown> | undefined,
  ): Promise<LiveFile> {
    const { relative, absolute } = await this.resolve(path, 'write');
    const dir = nodePath.dirname(absolute);
    await this.sweepOnce(dir);
    const temp = nodePath.join(dir, stagedTempName());
    if (expectedBeforeHash === ABSENT) {
      // A create may need its folder: made only for a write that is not stale.
      await ready;
      await this.expectHash(relative, absolute, ABSENT);
      await fs.mkdir(dir, { recursive: true });
    }
    const staged = stageTemp(temp, bytes, absolute, this.pfs);
    try {
      await Promise.all([ready, staged]);
      await checkThenRename(this.pfs, relative, absolute, expectedBeforeHash, temp);
    } catch (error) {
      await staged.catch(() => undefined);
      await fs.rm(temp, { force: true });
      throw error;
    }
    await this.pfs.syncFolder(dir);
    return { path: relative, bytes, hash: hashContent(bytes), source: 'disk', dirty: false };
  }

  /** The first write into a folder removes the temp files a killed host staged there. */
  private async sweepOnce(dir: string): Promise<void> {
    if (this.swept.has(dir)) return;
    this.swept.add(dir);
    await sweepStagedTemps(dir);
  }

  async delete(path: string, expectedBeforeHash: string): Promise<void> {
    const { relative, absolute } = await this.resolve(path);
    await this.expectHash(relative, absolute, expectedBeforeHash);
    await this.pfs.unlink(absolute);
    await this.pfs.syncFolder(nodePath.dirname(absolute));
  }

  async list(dir: string): Promise<DirEntry[]> {
    const absolute = dir === '' || dir === '.' ? (await this.paths.resolve('.')).real : (await this.resolve(dir)).absolute;
    const entries = await fs.readdir(absolute, { withFileTypes: true });
    return entries.filter((e) => e.name !== '.git').map((e) => ({ name: e.name, kind: kindOf(e) }));
  }

  async stat(path: string): Promise<FileStat | null> {
    const { absolute } = await this.resolve(path);
    const stats = await fs.lstat(absolute).catch(nullOnMissing);
    if (stats === null) return null;
    return { kind: kindOf(stats), size: stats.size, mtimeMs: stats.mtimeMs };
  }

  // Search, find and tree: the shared engine in ./search, on the folder the query names.

  /** The workspace folder holding dir (a folder path, '.' for the first one) and dir within it. */
  private async locate(dir: string): Promise<Located> {
    const roots = this.paths.folders();
    const absolute = dir === '' || dir === '.' ? roots[0]!.real : (await this.resolve(dir)).absolute;
    const root = roots.find((r) => isInside(absolute, r.real)) ?? roots[0]!;
    const base = nodePath.relative(root.real, absolute).split(nodePath.sep).join('/');
    return { rootAbs: root.real, base, prefix: root === roots[0] ? '' : `${root.name}/` };
  }

  private searchOptions(): HostSearchOptions {
    return {
      rgPath: this.options.ripgrep === undefined ? ripgrepOnPath() : this.options.ripgrep,
      ...(this.options.storeDir !== undefined ? { storeDir: this.options.storeDir } : {}),
    };
  }

  async searchText(query: TextSearchQuery, signal?: AbortSignal): Promise<TextSearchResult> {
    return workspaceSearch(await this.locate(query.dir), query, this.searchOptions(), signal);
  }

  async findFiles(query: FileQuery, signal?: AbortSignal): Promise<FileList> {
    return workspaceFind(await this.locate(query.dir), query, this.searchOptions(), signal);
  }

  async listTree(query: TreeQuery): Promise<TreeListing> {
    return workspaceTree(await this.locate(query.dir), query, this.searchOptions());
  }
}

function throwWhenStale(path: string, expected: string, live: Uint8Array | null): void {
  const actual = live === null ? ABSENT : hashContent(live);
  if (actual !== expected) throw new StaleContentError(path, expected, actual);
}

/**
 * The live content checked against the expected hash, then the temp file renamed over it. For a
 * small file both happen synchronously, one right after the other: no other work of this
 * process runs between them, and another writer has microseconds, not round trips, to slip in.
 * A refused open or rename (Windows, for an instant) is retried, the check with it.
 */
function checkThenRename(pfs: PlatformFs, path: string, absolute: string, expected: string, temp: string): Promise<void> {
  return pfs.retrying('rename', absolute, async () => {
    const now = readSmallNow(absolute, pfs.calls);
    if (now !== 'large') {
      throwWhenStale(path, expected, now);
      pfs.calls.renameSync(temp, absolute);
      return;
    }
    throwWhenStale(path, expected, await readInBackground(absolute, pfs.calls));
    await pfs.calls.rename(temp, absolute);
  });
}
