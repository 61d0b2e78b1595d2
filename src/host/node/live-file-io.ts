import * as fs from 'node:fs';
import { NODE_FS_CALLS, platformFs, type PlatformFs, type RawFsCalls } from './platform-fs';

// File I/O of the Node workspace on the path of one recorded edit. The callback API on raw
// descriptors: each fs.promises FileHandle call costs an extra round trip on these tiny files.
// Small files are read with synchronous calls: a few microseconds of the event loop instead of
// four thread-pool round trips, and a hash check immediately followed by the rename.

/** Files up to this size are read (and written, without fsync) synchronously; larger ones through the thread pool. */
export const SYNC_READ_MAX_BYTES = 256 * 1024;

function call<T>(start: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((error, value) => (error ? reject(error) : resolve(value)));
  });
}

const voidCall = (start: (done: (error: NodeJS.ErrnoException | null) => void) => void): Promise<void> =>
  call<void>((done) => start((error) => done(error, undefined)));

export function nullOnMissing(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT') return null;
  throw error;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * Opened without blocking: a FIFO opens at once with O_NONBLOCK (a blocking open waits for a
 * writer, forever), then fstat tells what it is and anything but a regular file is refused.
 */
const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

/** A path that is a FIFO, socket, device or folder: tools read regular files only. */
export class NotRegularFileError extends Error {
  constructor(
    readonly path: string,
    readonly what: string,
  ) {
    super(`${path} is ${what}, not a regular file; only regular files can be read`);
    this.name = 'NotRegularFileError';
  }
}

function describeKind(stats: fs.Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'a special file';
}

function requireRegular(absolute: string, stats: fs.Stats): void {
  if (!stats.isFile()) throw new NotRegularFileError(absolute, describeKind(stats));
}

/** open(2) of a socket fails with ENXIO: reported as what it is. */
function refuseUnopenable(absolute: string, error: unknown): never {
  if ((error as NodeJS.ErrnoException).code === 'ENXIO') throw new NotRegularFileError(absolute, 'a socket or device without a reader');
  throw error;
}

/** Reads the open file to its end: one read for a file that does not grow after `size` was taken. */
function readToEnd(
  size: number,
  readAt: (bytes: Uint8Array, offset: number, length: number) => number | Promise<number>,
): Uint8Array | Promise<Uint8Array> {
  let bytes = new Uint8Array(size + 1);
  let length = 0;
  const step = (bytesRead: number): Uint8Array | null => {
    const wanted = bytes.length - length;
    length += bytesRead;
    // A short read of a regular file is its end; a file that grew since fstat fills the buffer and reads on.
    if (bytesRead < wanted) return bytes.subarray(0, length);
    const grown = new Uint8Array(bytes.length * 2);
    grown.set(bytes);
    bytes = grown;
    return null;
  };
  const loop = (): Uint8Array | Promise<Uint8Array> => {
    for (;;) {
      const read = readAt(bytes, length, bytes.length - length);
      if (typeof read !== 'number') return read.then((n) => step(n) ?? loop());
      const done = step(read);
      if (done) return done;
    }
  };
  return loop();
}

/** Bytes of a small file read now (synchronously), null when missing, 'large' when over the sync limit. */
export function readSmallNow(absolute: string, calls: RawFsCalls = NODE_FS_CALLS): Uint8Array | null | 'large' {
  let fd: number;
  try {
    fd = calls.openSync(absolute, READ_FLAGS);
  } catch (error) {
    if (isMissing(error)) return null;
    refuseUnopenable(absolute, error);
  }
  try {
    const stats = fs.fstatSync(fd);
    requireRegular(absolute, stats);
    const size = stats.size;
    if (size > SYNC_READ_MAX_BYTES) return 'large';
    return readToEnd(size, (bytes, offset, length) => fs.readSync(fd, bytes, offset, length, offset)) as Uint8Array;
  } finally {
    fs.closeSync(fd);
  }
}

/** Bytes of a file, or null when it does not exist: open, fstat, read to the end, close. */
export async function readInBackground(absolute: string, calls: RawFsCalls = NODE_FS_CALLS): Promise<Uint8Array | null> {
  const fd = await calls
    .open(absolute, READ_FLAGS)
    .catch((error: NodeJS.ErrnoException) => (isMissing(error) ? null : refuseUnopenable(absolute, error)));
  if (fd === null) return null;
  try {
    const stats = await call<fs.Stats>((done) => fs.fstat(fd, done));
    requireRegular(absolute, stats);
    const size = stats.size;
    return await readToEnd(size, (bytes, offset, length) => call<number>((done) => fs.read(fd, bytes, offset, length, offset, done)));
  } finally {
    await voidCall((done) => fs.close(fd, done));
  }
}

/** What a bounded read found instead of bytes. */
export type BoundedRead = Uint8Array | 'missing' | 'not_regular' | 'too_large';

/**
 * Bytes of a regular file of at most maxBytes, for a search: the size is checked (fstat) before
 * anything is read; a file that grows past the cap while read is too large too. Never blocks.
 */
export async function readBounded(absolute: string, maxBytes: number): Promise<BoundedRead> {
  let fd: number;
  try {
    fd = await call<number>((done) => fs.open(absolute, READ_FLAGS, done));
  } catch (error) {
    return isMissing(error) ? 'missing' : 'not_regular';
  }
  try {
    const stats = await call<fs.Stats>((done) => fs.fstat(fd, done));
    if (!stats.isFile()) return 'not_regular';
    if (stats.size > maxBytes) return 'too_large';
    const bytes = new Uint8Array(stats.size + 1);
    let length = 0;
    for (;;) {
      const n = await call<number>((done) => fs.read(fd, bytes, length, bytes.length - length, length, done));
      if (n === 0) return bytes.subarray(0, length);
      length += n;
      if (length > stats.size) return 'too_large';
    }
  } finally {
    fs.close(fd, () => undefined);
  }
}

/** Bytes of a file (small ones read synchronously), or null when it does not exist; a refused open retried as the platform does. */
export async function readLive(absolute: string, pfs: PlatformFs = platformFs): Promise<Uint8Array | null> {
  return pfs.retrying('open', absolute, () => {
    const now = readSmallNow(absolute, pfs.calls);
    return now === 'large' ? readInBackground(absolute, pfs.calls) : now;
  });
}

/** Writes all bytes at the file's position: a small buffer synchronously (into the page cache, no fsync). */
async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  let written = 0;
  if (bytes.length <= SYNC_READ_MAX_BYTES) {
    while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written, null);
    return;
  }
  while (written < bytes.length) written += await call<number>((done) => fs.write(fd, bytes, written, bytes.length - written, null, done));
}

/**
 * A new temp file holding bytes with the mode of the file it replaces (when there is one),
 * fsynced on its own handle and closed, ready to be renamed over it (platform-fs.ts).
 */
export async function stageTemp(temp: string, bytes: Uint8Array, replaces: string, pfs: PlatformFs = platformFs): Promise<void> {
  const mode = call<fs.Stats>((done) => fs.stat(replaces, done)).then((stats) => stats.mode & 0o7777, nullOnMissing);
  mode.catch(() => undefined);
  const fd = await pfs.open(temp, 'wx', 0o666);
  try {
    await writeAll(fd, bytes);
    const replacedMode = await mode;
    if (replacedMode !== null) fs.fchmodSync(fd, replacedMode);
    await pfs.calls.fsync(fd);
  } finally {
    pfs.calls.closeSync(fd);
  }
}
