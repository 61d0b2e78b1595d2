import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import * as nodePath from 'node:path';
import { ABSENT, decodeText, hashContent } from '../../../core/patches/hash';
import {
  StaleContentError,
  type DirEntry,
  type FileList,
  type FileQuery,
  type FileStat,
  type LiveFile,
  type Log,
  type TextSearchQuery,
  type TextSearchResult,
  type TreeListing,
  type TreeQuery,
  type Workspace,
} from '../../../core/ports';
import { executableAt, hasFileModes, setExecutableAt } from '../../node/file-mode';
import { readLive } from '../../node/live-file-io';
import { isInside, realpathOfDeepest, ROOT_PATH, samePath, WorkspacePaths, type ResolvedPath } from '../../node/path-rules';
import { ripgrepOnPath, ripgrepUnderAppRoot } from '../../node/search/index';
import type { BufferText } from '../../node/search/buffers';
import { workspaceFind, workspaceSearch, workspaceTree, type HostSearchOptions, type Located } from '../../node/search/workspace-search';

const utf8 = new TextEncoder();

function kindOf(type: vscode.FileType): DirEntry['kind'] {
  if (type & vscode.FileType.SymbolicLink) return 'symlink';
  if (type & vscode.FileType.Directory) return 'dir';
  return type & vscode.FileType.File ? 'file' : 'other';
}

/** A document of a workspace file: on disk, or untitled with the path it will be saved to (a file not created yet). */
function isWorkspaceBuffer(doc: vscode.TextDocument): boolean {
  return doc.uri.scheme === 'file' || (doc.uri.scheme === 'untitled' && nodePath.isAbsolute(doc.uri.fsPath));
}

function isNotFound(error: unknown): boolean {
  return error instanceof vscode.FileSystemError && error.code === 'FileNotFound';
}

/** The end-of-line a text asks for, or undefined when it has no line break. */
function eolOf(text: string): vscode.EndOfLine | undefined {
  if (text.includes('\r\n')) return vscode.EndOfLine.CRLF;
  return text.includes('\n') ? vscode.EndOfLine.LF : undefined;
}

/**
 * The Workspace port over VS Code. An open document is read through its live buffer (unsaved
 * edits count) and written through a WorkspaceEdit, so the editor and its undo stack stay
 * coherent; the agent saves a document it wrote only when it was clean before. Files that are
 * not open go through `workspace.fs`.
 */
export class LiveWorkspace implements Workspace {
  readonly roots: readonly string[];
  /** The path rules (host/node/path-rules), shared with the timeline. */
  readonly paths: WorkspacePaths;
  /** One write at a time per file, so a check-then-write pair is never interleaved. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** The executable bit, on disk (file-mode.ts); left out on Windows, which has no file modes. */
  readonly executable?: (path: string) => Promise<boolean | null>;
  readonly setExecutable?: (path: string, executable: boolean, expected?: boolean) => Promise<void>;

  constructor(
    roots: readonly string[],
    private readonly storeDir: string | undefined,
    private readonly log: Log,
  ) {
    this.roots = roots;
    this.paths = new WorkspacePaths(roots, storeDir);
    if (hasFileModes()) {
      this.executable = async (path) => executableAt((await this.paths.resolve(path)).real);
      this.setExecutable = async (path, executable, expected) => {
        const resolved = await this.paths.resolve(path);
        await this.serialized(resolved.real, () => setExecutableAt(resolved.relative, resolved.real, executable, expected));
      };
    }
  }

  async normalize(path: string, intent?: 'write'): Promise<string> {
    return (await (intent === 'write' ? this.paths.resolveForWrite(path) : this.paths.resolve(path))).relative;
  }

  private documentOf(resolved: ResolvedPath): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find(
      // VS Code spells a drive letter in lower case, realpath in upper case: compared as the platform does.
      (doc) =>
        isWorkspaceBuffer(doc) && !doc.isClosed && (samePath(doc.uri.fsPath, resolved.real) || samePath(doc.uri.fsPath, resolved.lexical)),
    );
  }

  /** Buffers under a workspace folder whose text is not the disk's: dirty documents, and files so far only in an editor. */
  private buffersUnder(rootAbs: string): BufferText[] {
    const out: BufferText[] = [];
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.isClosed || !isWorkspaceBuffer(doc) || (doc.uri.scheme === 'file' && !doc.isDirty)) continue;
      const real = realpathOfDeepest(doc.uri.fsPath);
      if (!isInside(real, rootAbs) || samePath(real, rootAbs)) continue;
      const path = nodePath.relative(rootAbs, real).split(nodePath.sep).join('/');
      out.push({ path, text: doc.getText(), onDisk: existsSync(real) });
    }
    return out;
  }

  private async readResolved(resolved: ResolvedPath): Promise<LiveFile | null> {
    const doc = this.documentOf(resolved);
    if (doc) {
      const bytes = utf8.encode(doc.getText());
      return { path: resolved.relative, bytes, hash: hashContent(bytes), source: 'buffer', dirty: doc.isDirty };
    }
    // Disk through Node, as the CLI reads it: regular files only, opened without blocking (a FIFO must not hang the host).
    const bytes = await readLive(resolved.real);
    if (bytes === null) return null;
    return { path: resolved.relative, bytes, hash: hashContent(bytes), source: 'disk', dirty: false };
  }

  async read(path: string): Promise<LiveFile | null> {
    return this.readResolved(await this.paths.resolve(path));
  }

  private serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }

  private async expectLive(resolved: ResolvedPath, expected: string): Promise<LiveFile | null> {
    const live = await this.readResolved(resolved);
    const actual = live === null ? ABSENT : live.hash;
    if (actual !== expected) throw new StaleContentError(resolved.relative, expected, actual);
    return live;
  }

  async write(path: string, bytes: Uint8Array, expectedBeforeHash: string): Promise<LiveFile> {
    const resolved = await this.paths.resolveForWrite(path);
    return this.serialized(resolved.real, async () => {
      await this.expectLive(resolved, expectedBeforeHash);
      const doc = this.documentOf(resolved);
      if (doc) await this.writeDocument(doc, resolved, bytes);
      else await vscode.workspace.fs.writeFile(vscode.Uri.file(resolved.real), bytes);
      const after = await this.readResolved(resolved);
      if (after === null) throw new Error(`${resolved.relative} is missing right after it was written`);
      return after;
    });
  }

  private async writeDocument(doc: vscode.TextDocument, resolved: ResolvedPath, bytes: Uint8Array): Promise<void> {
    const decoded = decodeText(bytes);
    const wasDirty = doc.isDirty;
    if (decoded === null) {
      if (wasDirty) throw new Error(`${resolved.relative} is open with unsaved edits; binary content cannot be written into it`);
      await vscode.workspace.fs.writeFile(doc.uri, bytes);
      return;
    }
    const version = doc.version;
    const edits = [vscode.TextEdit.replace(doc.validateRange(new vscode.Range(0, 0, doc.lineCount, 0)), decoded.text)];
    const eol = eolOf(decoded.text);
    if (eol !== undefined && eol !== doc.eol) edits.push(vscode.TextEdit.setEndOfLine(eol));
    const edit = new vscode.WorkspaceEdit();
    edit.set(doc.uri, edits);
    // A keystroke between the hash check and here would change the version: refuse, never overwrite it.
    if (doc.version !== version) throw new StaleContentError(resolved.relative, hashContent(bytes), 'changed during the write');
    if (!(await vscode.workspace.applyEdit(edit))) {
      throw new Error(`VS Code refused the edit of ${resolved.relative} (the document changed or is read-only)`);
    }
    if (wasDirty) {
      this.log.log('info', `${resolved.relative}: written into a buffer with unsaved user edits; not saved by the agent`, {
        path: resolved.relative,
      });
      return;
    }
    if (!(await doc.save()))
      this.log.log('warn', `${resolved.relative}: the agent's edit is in the editor but VS Code did not save it`, {
        path: resolved.relative,
      });
  }

  async delete(path: string, expectedBeforeHash: string): Promise<void> {
    const resolved = await this.paths.resolve(path);
    await this.serialized(resolved.real, async () => {
      await this.expectLive(resolved, expectedBeforeHash);
      await vscode.workspace.fs.delete(vscode.Uri.file(resolved.real), { recursive: false, useTrash: false });
    });
  }

  async list(dir: string): Promise<DirEntry[]> {
    const resolved = dir === '' || dir === ROOT_PATH ? undefined : await this.paths.resolve(dir);
    const absolute = resolved?.real ?? this.roots[0];
    if (absolute === undefined) return [];
    const entries = await vscode.workspace.fs.readDirectory(vscode.Uri.file(absolute));
    return entries.filter(([name]) => name !== '.git').map(([name, type]) => ({ name, kind: kindOf(type) }));
  }

  async stat(path: string): Promise<FileStat | null> {
    const resolved = await this.paths.resolve(path);
    try {
      const stat = await vscode.workspace.fs.stat(vscode.Uri.file(resolved.lexical));
      return { kind: kindOf(stat.type), size: stat.size, mtimeMs: stat.mtime };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  // Search, find and tree: the shared Node engine on disk, with VS Code's ripgrep and exclude settings.

  private rgPath: string | null | undefined;

  private async locate(dir: string): Promise<Located> {
    const real = (await this.paths.resolve(dir === '' ? ROOT_PATH : dir)).real;
    const reals = this.roots.map((root) => realpathOfDeepest(root));
    const index = Math.max(
      0,
      reals.findIndex((root) => isInside(real, root)),
    );
    const rootAbs = reals[index]!;
    const base = nodePath.relative(rootAbs, real).split(nodePath.sep).join('/');
    return { rootAbs, base, prefix: index === 0 ? '' : `${nodePath.basename(this.roots[index]!)}/` };
  }

  /** ripgrep from the VS Code install (else PATH), and the folder's `files.exclude` and `search.exclude` globs set to true. */
  private searchOptions(at: Located): HostSearchOptions {
    this.rgPath ??= ripgrepUnderAppRoot(vscode.env.appRoot) ?? ripgrepOnPath();
    const folder = vscode.Uri.file(at.rootAbs);
    const globs = (section: string): string[] => {
      const value = vscode.workspace.getConfiguration(section, folder).get<unknown>('exclude');
      if (typeof value !== 'object' || value === null) return [];
      return Object.entries(value as Record<string, unknown>)
        .filter(([, on]) => on === true)
        .map(([glob]) => glob);
    };
    const store = this.storeDir !== undefined ? { storeDir: this.storeDir } : {};
    return { rgPath: this.rgPath, hostExclude: [...globs('files'), ...globs('search')], ...store, buffers: this.buffersUnder(at.rootAbs) };
  }

  async searchText(query: TextSearchQuery, signal?: AbortSignal): Promise<TextSearchResult> {
    const at = await this.locate(query.dir);
    return workspaceSearch(at, query, this.searchOptions(at), signal);
  }

  async findFiles(query: FileQuery, signal?: AbortSignal): Promise<FileList> {
    const at = await this.locate(query.dir);
    return workspaceFind(at, query, this.searchOptions(at), signal);
  }

  async listTree(query: TreeQuery): Promise<TreeListing> {
    const at = await this.locate(query.dir);
    return workspaceTree(at, query, this.searchOptions(at));
  }
}
