import { posix } from 'node:path';

// The file operations the file store needs, one method each, so that a test can wrap the port
// and fail or crash at any single operation. Paths are absolute with forward slashes.
// Errors carry a Node-style `code` (ENOENT, EEXIST, ENOSPC, EIO...).

/** An open file; only the port that opened it knows what is inside. */
export interface StoreFileHandle {
  readonly path: string;
}

export interface StoreFileStat {
  readonly size: number;
  readonly mtimeMs: number;
  readonly isDirectory: boolean;
}

export interface StoreFs {
  /** Opens for appending, creating the file when it does not exist. */
  openAppend(path: string): Promise<StoreFileHandle>;
  /** Creates a new file for writing; fails with EEXIST when it exists. */
  openExclusive(path: string): Promise<StoreFileHandle>;
  /** Writes all bytes at the end of the file (not durable until sync). */
  write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void>;
  /** fsync: everything written through this handle is on disk when it resolves. */
  sync(handle: StoreFileHandle): Promise<void>;
  close(handle: StoreFileHandle): Promise<void>;
  /** Size of the open file as the file system sees it now. */
  size(handle: StoreFileHandle): Promise<number>;
  readFile(path: string): Promise<Uint8Array>;
  /**
   * The bytes of a file from `offset` to its end, or at most `length` of them (a journal's tail
   * after a snapshot; a part of a parent's journal a fork reads). Optional: without it the store
   * reads the whole file. A port may return more than `length` bytes: the store cuts them.
   */
  readFrom?(path: string, offset: number, length?: number): Promise<Uint8Array>;
  /** Cuts a file back to `length` bytes and syncs it. */
  truncate(path: string, length: number): Promise<void>;
  /** Atomically replaces `to` with `from`. */
  rename(from: string, to: string): Promise<void>;
  /** Atomically creates `to` as another name of `from`; fails with EEXIST when `to` exists. */
  link(from: string, to: string): Promise<void>;
  /** fsync of a directory, so that names created, renamed or removed in it are durable. */
  syncDir(path: string): Promise<void>;
  /** mkdir -p */
  mkdirp(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  /** null when nothing exists at the path. */
  stat(path: string): Promise<StoreFileStat | null>;
  unlink(path: string): Promise<void>;
  /** Removes an empty directory. */
  rmdir(path: string): Promise<void>;
  /** Asked between slices of a long read (every few KiB or records): lets the event loop run once a few ms of work went by (Node: setImmediate). Optional: without it such a read runs in one go. */
  yieldToEventLoop?(): Promise<void>;
  /**
   * Tells `listener` the path (relative to `dir`, forward slashes) of files changed, created or
   * removed anywhere under `dir`, until closed. May report a change more than once, never with
   * its content. Optional: without it the store offers no change notice.
   */
  watch?(dir: string, listener: (relativePath: string) => void): { close(): void };
}

const hasCode = (error: unknown, code: string): boolean => (error as { code?: unknown } | null)?.code === code;
export const isNotFound = (error: unknown): boolean => hasCode(error, 'ENOENT');
export const isExists = (error: unknown): boolean => hasCode(error, 'EEXIST');

/** The names in a folder; none when it does not exist. */
export async function readdirOrEmpty(fs: StoreFs, dir: string): Promise<string[]> {
  return fs.readdir(dir).catch((error: unknown) => (isNotFound(error) ? [] : Promise.reject(error)));
}

/** Joins the parts of a store path (forward slashes, as the port takes them). */
export const joinPath = posix.join;

/**
 * mkdir -p that makes every folder it created durable: the parent of each new folder is
 * fsynced, so a power cut cannot lose a new folder's name (and all that is under it).
 */
export async function mkdirpDurable(fs: StoreFs, dir: string): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; (await fs.stat(at)) === null; at = posix.dirname(at)) {
    missing.push(at);
    if (at === '/') break;
  }
  if (missing.length === 0) return;
  await fs.mkdirp(dir);
  for (const created of missing.reverse()) await fs.syncDir(posix.dirname(created));
}

/** The store's name for errorText (core/error-text.ts). */
export { errorText as errorMessage } from '../error-text';
