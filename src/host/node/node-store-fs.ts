import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { StoreFileHandle, StoreFileStat, StoreFs } from '../../core/store/fs-port';
import { platformFs, type PlatformFs } from './platform-fs';

// Files the store writes are fs.promises handles (tools that watch a journal's fsyncs, the
// kill-fault harness among them, hook FileHandle.sync). Everything else is cheaper: small reads
// and writes (no fsync) and folder opens go through the synchronous calls, a few microseconds
// of the event loop against a thread-pool round trip each; the rest through the callback API,
// which costs less per call than fs.promises on this path of tiny files and fsyncs.

/** Reads and writes up to this size are made synchronously. */
const SYNC_IO_MAX_BYTES = 64 * 1024;

/** No store file is read beyond this size (a journal is pieces of 1 MiB; a blob is one file's content). */
export const MAX_STORE_FILE_BYTES = 1024 * 1024 * 1024;

// Store files are opened without following a symlink (O_NOFOLLOW), and a read never waits on a
// FIFO (O_NONBLOCK): only a regular file within the cap is read; anything else is a clear error at once.
const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const READ_FLAGS = fs.constants.O_RDONLY | NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0);
const APPEND_FLAGS = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | NOFOLLOW;

function refused(path: string, why: string): Error {
  return Object.assign(new Error(`store file ${path} ${why}: refused`), { code: 'EREFUSED' });
}

function noFollowError(path: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ELOOP' || code === 'EMLINK' ? refused(path, 'is a symbolic link') : error;
}

/** The descriptor and size of a regular store file, opened for reading without following a link. */
function openRegular(path: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = fs.openSync(path, READ_FLAGS);
  } catch (error) {
    throw noFollowError(path, error);
  }
  const stat = fs.fstatSync(fd);
  const why = !stat.isFile()
    ? 'is not a regular file'
    : stat.size > MAX_STORE_FILE_BYTES
      ? `is larger than ${MAX_STORE_FILE_BYTES} bytes`
      : '';
  if (why !== '') {
    fs.closeSync(fd);
    throw refused(path, why);
  }
  return { fd, size: stat.size };
}

class NodeHandle implements StoreFileHandle {
  constructor(
    readonly path: string,
    readonly file: FileHandle,
  ) {}
}

function nodeHandle(handle: StoreFileHandle): NodeHandle {
  if (!(handle instanceof NodeHandle)) throw new Error(`not a handle of this port: ${handle.path}`);
  return handle;
}

/** A promise of one callback-style fs call. */
function call<T>(start: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((error, value) => (error ? reject(error) : resolve(value)));
  });
}

function openFd(path: string, flags: string | number, mode?: number): Promise<number> {
  return call<number>((done) => fs.open(path, flags, mode, done));
}

function fsyncFd(fd: number): Promise<void> {
  return call<void>((done) => fs.fsync(fd, (error) => done(error, undefined)));
}

function closeFd(fd: number): Promise<void> {
  return call<void>((done) => fs.close(fd, (error) => done(error, undefined)));
}

async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  if (bytes.length <= SYNC_IO_MAX_BYTES) {
    for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done, null);
    return;
  }
  let done = 0;
  while (done < bytes.length) {
    done += await call<number>((cb) => fs.write(fd, bytes, done, bytes.length - done, null, cb));
  }
}

/** A small file's bytes, read now; null when it is larger (to be read through the thread pool). */
function readSmallNow(path: string): Uint8Array | null {
  const { fd, size } = openRegular(path);
  try {
    if (size > SYNC_IO_MAX_BYTES) return null;
    // Up to its end, even when it grew since fstat.
    const chunks: Uint8Array[] = [];
    for (;;) {
      const chunk = new Uint8Array(Math.max(size + 1, 4096));
      const read = fs.readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      if (chunks.reduce((n, c) => n + c.length, read) > MAX_STORE_FILE_BYTES) throw refused(path, 'grows without end');
      chunks.push(chunk.subarray(0, read));
      if (read < chunk.length) break;
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  } finally {
    fs.closeSync(fd);
  }
}

const PIECE_BYTES = 1024 * 1024;

function notFoundAsNull(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT') return null;
  throw error;
}

/** StoreFs over node:fs. */
/**
 * A long read lets the event loop run once this much of its work has gone by: the store asks at
 * every few KiB, records or messages (a schema's first use in a process is slow, so a fixed slice
 * of work can hold the loop for 15 ms), and the time decides.
 */
const YIELD_EVERY_MS = 3;

export class NodeStoreFs implements StoreFs {
  /** @param pfs the platform layer (platform-fs.ts): folder fsyncs, retries of refused opens, renames and unlinks. */
  constructor(
    private readonly pfs: PlatformFs = platformFs,
    /** The clock of the pauses (performance.now; a test passes its own, so no load on the machine moves it). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  async openAppend(path: string): Promise<StoreFileHandle> {
    const file = await this.pfs
      .retrying('open', path, () => fsp.open(path, APPEND_FLAGS, 0o666))
      .catch((error: unknown) => Promise.reject(noFollowError(path, error)));
    if (!(await file.stat()).isFile()) {
      await file.close();
      throw refused(path, 'is not a regular file');
    }
    return new NodeHandle(path, file);
  }
  async openExclusive(path: string): Promise<StoreFileHandle> {
    return new NodeHandle(path, await this.pfs.retrying('open', path, () => fsp.open(path, 'wx')));
  }
  async write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    await writeAll(nodeHandle(handle).file.fd, bytes);
  }
  async sync(handle: StoreFileHandle): Promise<void> {
    await nodeHandle(handle).file.sync();
  }
  async close(handle: StoreFileHandle): Promise<void> {
    await nodeHandle(handle).file.close();
  }
  async size(handle: StoreFileHandle): Promise<number> {
    return fs.fstatSync(nodeHandle(handle).file.fd).size;
  }
  async readFile(path: string): Promise<Uint8Array> {
    const small = await this.pfs.retrying('open', path, () => readSmallNow(path));
    if (small !== null) return small;
    const { fd } = await this.pfs.retrying('open', path, () => openRegular(path));
    try {
      return await call<Buffer>((done) => fs.readFile(fd, done));
    } finally {
      await closeFd(fd);
    }
  }
  async readFrom(path: string, offset: number, length?: number): Promise<Uint8Array> {
    const { fd, size } = await this.pfs.retrying('open', path, () => openRegular(path));
    try {
      const bytes = Buffer.allocUnsafe(Math.max(0, Math.min(size - offset, length ?? Infinity)));
      let filled = 0;
      while (filled < bytes.length) {
        const read = await call<number>((done) =>
          fs.read(fd, bytes, filled, Math.min(PIECE_BYTES, bytes.length - filled), offset + filled, done),
        );
        if (read === 0) break;
        filled += read;
      }
      return bytes.subarray(0, filled);
    } finally {
      await closeFd(fd);
    }
  }
  /** When the loop last ran (performance.now()): the store asks often, the loop runs every YIELD_EVERY_MS of work. */
  private loopRanAt = 0;
  yieldToEventLoop(): Promise<void> {
    if (this.now() - this.loopRanAt < YIELD_EVERY_MS) return Promise.resolve();
    return new Promise((resolve) =>
      setImmediate(() => {
        this.loopRanAt = this.now();
        resolve();
      }),
    );
  }
  watch(dir: string, listener: (relativePath: string) => void): { close(): void } {
    const watcher = fs.watch(dir, { recursive: true, persistent: false }, (_event, name) => {
      if (typeof name === 'string') listener(name.split(nodePath.sep).join('/'));
    });
    // A folder removed under the watcher (a run collected) must not crash the process.
    watcher.on('error', () => undefined);
    return { close: () => watcher.close() };
  }
  async truncate(path: string, length: number): Promise<void> {
    const fd = await this.pfs
      .retrying('open', path, () => openFd(path, fs.constants.O_RDWR | NOFOLLOW))
      .catch((error: unknown) => Promise.reject(noFollowError(path, error)));
    try {
      await call<void>((done) => fs.ftruncate(fd, length, (error) => done(error, undefined)));
      await fsyncFd(fd);
    } finally {
      await closeFd(fd);
    }
  }
  async rename(from: string, to: string): Promise<void> {
    await this.pfs.rename(from, to);
  }
  async link(from: string, to: string): Promise<void> {
    await call<void>((done) => fs.link(from, to, (error) => done(error, undefined)));
  }
  async syncDir(path: string): Promise<void> {
    await this.pfs.syncFolder(path);
  }
  async mkdirp(path: string): Promise<void> {
    await call<string | undefined>((done) => fs.mkdir(path, { recursive: true }, done));
  }
  async readdir(path: string): Promise<string[]> {
    return call<string[]>((done) => fs.readdir(path, done));
  }
  async stat(path: string): Promise<StoreFileStat | null> {
    const st = await call<fs.Stats>((done) => fs.stat(path, done)).catch(notFoundAsNull);
    if (st === null) return null;
    return { size: st.size, mtimeMs: st.mtimeMs, isDirectory: st.isDirectory() };
  }
  async unlink(path: string): Promise<void> {
    await this.pfs.unlink(path);
  }
  async rmdir(path: string): Promise<void> {
    await call<void>((done) => fs.rmdir(path, (error) => done(error, undefined)));
  }
}
