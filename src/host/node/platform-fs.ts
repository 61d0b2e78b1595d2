import * as fs from 'node:fs';

// The one platform layer for file operations, used by the store (node-store-fs.ts) and the
// workspace (live-file-io.ts, node-workspace.ts) alike: what differs on Windows is decided here.
// - No folder is ever fsynced on Windows: it refuses a flush on a folder handle (EPERM). A file
//   is fsynced on its own handle before its rename (the callers do), and the rename itself is
//   not written through: a power cut can lose a just-made rename (docs/ARCHITECTURE.md §7).
// - EBUSY, EPERM and EACCES on open, rename and unlink are retried on Windows with backoff, a few
//   hundred ms in all: antivirus scanners, indexers and sync clients hold a file for an instant.
//   A lasting one is a FileBusyError naming the file. Elsewhere these codes are lasting at once.
// The platform and the raw calls are injectable, so that tests on Linux prove the Windows branch
// and inject faults.

export type Platform = NodeJS.Platform;

/** The raw calls under the layer (node:fs by default); a test passes failing ones. */
export interface RawFsCalls {
  openSync(path: string, flags: string | number, mode?: number): number;
  open(path: string, flags: string | number, mode?: number): Promise<number>;
  /** fsync of an open file or folder. */
  fsync(fd: number): Promise<void>;
  closeSync(fd: number): void;
  renameSync(from: string, to: string): void;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

function call<T>(start: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((error, value) => (error ? reject(error) : resolve(value)));
  });
}

const voidCall = (start: (done: (error: NodeJS.ErrnoException | null) => void) => void): Promise<void> =>
  call<void>((done) => start((error) => done(error, undefined)));

export const NODE_FS_CALLS: RawFsCalls = {
  openSync: (path, flags, mode) => fs.openSync(path, flags, mode),
  open: (path, flags, mode) => call<number>((done) => fs.open(path, flags, mode, done)),
  fsync: (fd) => voidCall((done) => fs.fsync(fd, done)),
  closeSync: (fd) => fs.closeSync(fd),
  renameSync: (from, to) => fs.renameSync(from, to),
  rename: (from, to) => voidCall((done) => fs.rename(from, to, done)),
  unlink: (path) => voidCall((done) => fs.unlink(path, done)),
};

/** Waits between tries of an operation Windows refused for an instant: 310 ms in all. */
export const RETRY_DELAYS_MS: readonly number[] = [10, 20, 40, 80, 160];

/** The codes a scanner, indexer or sync client holding a file for an instant causes on Windows. */
const TRANSIENT_CODES = new Set(['EBUSY', 'EPERM', 'EACCES']);

export type RetriedOp = 'open' | 'rename' | 'unlink';

/** An operation still refused after every retry: the file is named, the code kept. */
export class FileBusyError extends Error {
  readonly code: string;
  constructor(
    readonly op: RetriedOp,
    readonly path: string,
    tries: number,
    waitedMs: number,
    cause: unknown,
  ) {
    const code = String((cause as NodeJS.ErrnoException).code);
    super(
      `could not ${op} ${path}: refused (${code}) ${tries} times over ${waitedMs} ms; another program ` +
        `(an antivirus scanner, an indexer, a sync client or an editor) may be holding it, or it is not ` +
        `writable: close it there and try again (${(cause as Error).message})`,
    );
    this.name = 'FileBusyError';
    this.code = code;
  }
}

export interface PlatformFsOptions {
  readonly platform?: Platform;
  readonly calls?: RawFsCalls;
  readonly retryDelaysMs?: readonly number[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The platform's rules for file operations; one instance serves a store or a workspace. */
export class PlatformFs {
  readonly platform: Platform;
  readonly calls: RawFsCalls;
  private readonly delays: readonly number[];

  constructor(options: PlatformFsOptions = {}) {
    this.platform = options.platform ?? process.platform;
    this.calls = options.calls ?? NODE_FS_CALLS;
    this.delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  }

  /** False on Windows: a folder handle cannot be flushed there. */
  get syncsFolders(): boolean {
    return this.platform !== 'win32';
  }

  /** fsync of a folder, so that the names changed in it are durable; nothing on Windows. */
  async syncFolder(dir: string): Promise<void> {
    if (!this.syncsFolders) return;
    // Opening and closing a folder are lookups of microseconds: made synchronously, only the fsync waits.
    const fd = this.calls.openSync(dir, 'r');
    try {
      await this.calls.fsync(fd);
    } finally {
      this.calls.closeSync(fd);
    }
  }

  /**
   * Runs `attempt` (an open, rename or unlink of `path`, or a step ending in one), again after
   * each delay while Windows refuses it with EBUSY, EPERM or EACCES; once elsewhere. The first
   * attempt runs synchronously within the call.
   */
  async retrying<T>(op: RetriedOp, path: string, attempt: () => T | Promise<T>): Promise<T> {
    if (this.platform !== 'win32') return attempt();
    let waited = 0;
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        if (!TRANSIENT_CODES.has(String((error as NodeJS.ErrnoException).code))) throw error;
        const delay = this.delays[tries - 1];
        if (delay === undefined) throw new FileBusyError(op, path, tries, waited, error);
        await sleep(delay);
        waited += delay;
      }
    }
  }

  rename(from: string, to: string): Promise<void> {
    return this.retrying('rename', to, () => this.calls.rename(from, to));
  }

  unlink(path: string): Promise<void> {
    return this.retrying('unlink', path, () => this.calls.unlink(path));
  }

  open(path: string, flags: string | number, mode?: number): Promise<number> {
    return this.retrying('open', path, () => this.calls.open(path, flags, mode));
  }
}

/** The layer of this process's platform over node:fs. */
export const platformFs = new PlatformFs();
