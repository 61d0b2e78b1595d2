import type { StoreFileHandle, StoreFileStat, StoreFs } from '../../../src/core/store/fs-port';
import type { Prng } from './prng';

// An in-memory StoreFs with two layers, as a disk with a volatile page cache sees it:
// - file content: `durable` is what the last fsync put on disk; writes since then are pending.
// - names: `durableNames` is what directory fsyncs committed; name changes since then (create,
//   rename, link, unlink, mkdir, rmdir) wait in one ordered metadata log, like a journaling
//   file system's journal, until a syncDir of their folder commits them.
// `crashImage` builds what a power cut leaves: committed names plus a random prefix of the
// metadata log, and per file the durable bytes plus each pending write kept, dropped or garbled.

export type Entry = { readonly kind: 'file'; readonly ino: number } | { readonly kind: 'dir' };

interface PendingWrite {
  readonly offset: number;
  readonly bytes: Uint8Array;
}

interface Inode {
  durable: Uint8Array;
  current: Uint8Array;
  pending: PendingWrite[];
  mtimeMs: number;
}

interface MetaOp {
  /** Folders whose entries this op changes; a syncDir of each commits it. */
  readonly dirs: readonly string[];
  readonly changes: ReadonlyArray<readonly [string, Entry | null]>;
}

/** A file system image: names and the bytes of every file, all durable. */
export interface FsImage {
  readonly names: ReadonlyMap<string, Entry>;
  readonly files: ReadonlyMap<number, Uint8Array>;
}

export type WriteFate = 'kept' | 'dropped' | 'garbled' | 'torn';

export interface CrashChoices {
  /** How many uncommitted metadata ops survive (in order). */
  readonly metaKept: number;
  readonly metaPending: number;
  readonly writes: readonly WriteFate[];
}

export function fsError(code: string, op: string, path: string): Error {
  return Object.assign(new Error(`${code}: ${op} '${path}'`), { code, syscall: op, path });
}

export function normalise(path: string): string {
  if (!path.startsWith('/')) throw fsError('EINVAL', 'path', path);
  const trimmed = path.replace(/\/+/g, '/').replace(/\/$/, '');
  return trimmed === '' ? '/' : trimmed;
}

export function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}

class MemHandle implements StoreFileHandle {
  closed = false;
  constructor(
    readonly path: string,
    readonly ino: number,
    readonly owner: MemStoreFs,
  ) {}
}

function concatAt(base: Uint8Array, offset: number, bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.max(base.length, offset + bytes.length));
  out.set(base);
  out.set(bytes, offset);
  return out;
}

export class MemStoreFs implements StoreFs {
  private readonly names = new Map<string, Entry>([['/', { kind: 'dir' }]]);
  private readonly durableNames = new Map<string, Entry>([['/', { kind: 'dir' }]]);
  private readonly inodes = new Map<number, Inode>();
  private metaLog: MetaOp[] = [];
  private nextIno = 1;
  private clock = 0;

  /** A file system whose every name and byte is durable (a disk after a restart). */
  static fromImage(image: FsImage): MemStoreFs {
    const fs = new MemStoreFs();
    for (const [path, entry] of image.names) {
      fs.names.set(path, entry);
      fs.durableNames.set(path, entry);
    }
    for (const [ino, bytes] of image.files) {
      fs.inodes.set(ino, { durable: bytes, current: bytes, pending: [], mtimeMs: Date.now() });
      fs.nextIno = Math.max(fs.nextIno, ino + 1);
    }
    return fs;
  }

  // ---- StoreFs ----

  async openAppend(path: string): Promise<StoreFileHandle> {
    const p = normalise(path);
    const entry = this.names.get(p);
    if (entry?.kind === 'dir') throw fsError('EISDIR', 'open', p);
    if (entry) return new MemHandle(p, entry.ino, this);
    return new MemHandle(p, this.create(p), this);
  }

  async openExclusive(path: string): Promise<StoreFileHandle> {
    const p = normalise(path);
    if (this.names.has(p)) throw fsError('EEXIST', 'open', p);
    return new MemHandle(p, this.create(p), this);
  }

  async write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    const inode = this.inodeOf(handle, 'write');
    const offset = inode.current.length;
    inode.current = concatAt(inode.current, offset, bytes);
    inode.pending.push({ offset, bytes: bytes.slice() });
    inode.mtimeMs = this.tick();
  }

  async sync(handle: StoreFileHandle): Promise<void> {
    const inode = this.inodeOf(handle, 'fsync');
    inode.durable = inode.current;
    inode.pending = [];
  }

  async close(handle: StoreFileHandle): Promise<void> {
    this.handleOf(handle, 'close').closed = true;
  }

  async size(handle: StoreFileHandle): Promise<number> {
    return this.inodeOf(handle, 'fstat').current.length;
  }

  async readFile(path: string): Promise<Uint8Array> {
    return this.fileAt(path, 'open').current.slice();
  }

  async truncate(path: string, length: number): Promise<void> {
    const inode = this.fileAt(path, 'truncate');
    const cut = new Uint8Array(length);
    cut.set(inode.current.subarray(0, Math.min(length, inode.current.length)));
    inode.current = cut;
    inode.durable = cut;
    inode.pending = [];
    inode.mtimeMs = this.tick();
  }

  async rename(from: string, to: string): Promise<void> {
    const f = normalise(from);
    const t = normalise(to);
    const entry = this.names.get(f);
    if (!entry) throw fsError('ENOENT', 'rename', f);
    this.requireDir(parentOf(t), 'rename', t);
    const target = this.names.get(t);
    if (target?.kind === 'dir' && entry.kind === 'file') throw fsError('EISDIR', 'rename', t);
    if (entry.kind === 'dir') throw fsError('EPERM', 'rename', f); // the store renames files only
    if (f === t) return;
    this.change(
      [parentOf(f), parentOf(t)],
      [
        [t, entry],
        [f, null],
      ],
    );
  }

  async link(from: string, to: string): Promise<void> {
    const f = normalise(from);
    const t = normalise(to);
    const entry = this.names.get(f);
    if (!entry) throw fsError('ENOENT', 'link', f);
    if (entry.kind === 'dir') throw fsError('EPERM', 'link', f);
    if (this.names.has(t)) throw fsError('EEXIST', 'link', t);
    this.requireDir(parentOf(t), 'link', t);
    this.change([parentOf(t)], [[t, entry]]);
  }

  async syncDir(path: string): Promise<void> {
    const p = normalise(path);
    this.requireDir(p, 'fsync', p);
    const committed: MetaOp[] = [];
    const rest: MetaOp[] = [];
    for (const op of this.metaLog) (op.dirs.includes(p) ? committed : rest).push(op);
    for (const op of committed) applyChanges(this.durableNames, op);
    this.metaLog = rest;
  }

  async mkdirp(path: string): Promise<void> {
    const p = normalise(path);
    const missing: string[] = [];
    for (let at = p; !this.names.has(at); at = parentOf(at)) missing.unshift(at);
    const blocking = this.names.get(p);
    if (blocking?.kind === 'file') throw fsError('EEXIST', 'mkdir', p);
    for (const dir of missing) {
      if (this.names.get(parentOf(dir))?.kind === 'file') throw fsError('ENOTDIR', 'mkdir', dir);
      this.change([parentOf(dir)], [[dir, { kind: 'dir' }]]);
    }
  }

  async readdir(path: string): Promise<string[]> {
    const p = normalise(path);
    this.requireDir(p, 'scandir', p);
    return childrenOf(this.names, p).map((child) => child.slice(p === '/' ? 1 : p.length + 1));
  }

  async stat(path: string): Promise<StoreFileStat | null> {
    const p = normalise(path);
    const entry = this.names.get(p);
    if (!entry) return null;
    if (entry.kind === 'dir') return { size: 0, mtimeMs: 0, isDirectory: true };
    const inode = this.inodes.get(entry.ino);
    return { size: inode?.current.length ?? 0, mtimeMs: inode?.mtimeMs ?? 0, isDirectory: false };
  }

  async unlink(path: string): Promise<void> {
    const p = normalise(path);
    const entry = this.names.get(p);
    if (!entry) throw fsError('ENOENT', 'unlink', p);
    if (entry.kind === 'dir') throw fsError('EISDIR', 'unlink', p);
    this.change([parentOf(p)], [[p, null]]);
  }

  async rmdir(path: string): Promise<void> {
    const p = normalise(path);
    const entry = this.names.get(p);
    if (!entry) throw fsError('ENOENT', 'rmdir', p);
    if (entry.kind !== 'dir') throw fsError('ENOTDIR', 'rmdir', p);
    if (childrenOf(this.names, p).length > 0) throw fsError('ENOTEMPTY', 'rmdir', p);
    this.change([parentOf(p)], [[p, null]]);
  }

  // ---- power loss ----

  /** Unsynced bytes and uncommitted name changes right now. */
  volatileState(): { pendingWrites: number; pendingMeta: number } {
    let pendingWrites = 0;
    for (const inode of this.inodes.values()) pendingWrites += inode.pending.length;
    return { pendingWrites, pendingMeta: this.metaLog.length };
  }

  /** What a power cut at this instant leaves on disk, with random choices from `prng`. */
  crashImage(prng: Prng): { image: FsImage; choices: CrashChoices } {
    const names = new Map(this.durableNames);
    const metaKept = prng.int(this.metaLog.length + 1);
    for (const op of this.metaLog.slice(0, metaKept)) applyChanges(names, op);
    pruneOrphans(names);
    const writes: WriteFate[] = [];
    const files = new Map<number, Uint8Array>();
    for (const entry of names.values()) {
      if (entry.kind !== 'file' || files.has(entry.ino)) continue;
      const inode = this.inodes.get(entry.ino);
      files.set(entry.ino, inode ? survivingBytes(inode, prng, writes) : new Uint8Array(0));
    }
    return { image: { names, files }, choices: { metaKept, metaPending: this.metaLog.length, writes } };
  }

  /** The image as it is now, as if every write and name change had been synced. */
  cleanImage(): FsImage {
    const files = new Map<number, Uint8Array>();
    for (const [ino, inode] of this.inodes) files.set(ino, inode.current);
    return { names: new Map(this.names), files };
  }

  // ---- internals ----

  private tick(): number {
    this.clock += 1;
    return Date.now() + this.clock / 1000;
  }

  private change(dirs: readonly string[], changes: ReadonlyArray<readonly [string, Entry | null]>): void {
    const op: MetaOp = { dirs: [...new Set(dirs)], changes };
    applyChanges(this.names, op);
    this.metaLog.push(op);
  }

  private create(path: string): number {
    this.requireDir(parentOf(path), 'open', path);
    const ino = this.nextIno++;
    this.inodes.set(ino, { durable: new Uint8Array(0), current: new Uint8Array(0), pending: [], mtimeMs: this.tick() });
    this.change([parentOf(path)], [[path, { kind: 'file', ino }]]);
    return ino;
  }

  private requireDir(path: string, op: string, subject: string): void {
    const entry = this.names.get(path);
    if (!entry) throw fsError('ENOENT', op, subject);
    if (entry.kind !== 'dir') throw fsError('ENOTDIR', op, subject);
  }

  private fileAt(path: string, op: string): Inode {
    const p = normalise(path);
    const entry = this.names.get(p);
    if (!entry) throw fsError('ENOENT', op, p);
    if (entry.kind === 'dir') throw fsError('EISDIR', op, p);
    const inode = this.inodes.get(entry.ino);
    if (!inode) throw fsError('EIO', op, p);
    return inode;
  }

  private handleOf(handle: StoreFileHandle, op: string): MemHandle {
    if (!(handle instanceof MemHandle) || handle.owner !== this) throw fsError('EBADF', op, handle.path);
    if (handle.closed) throw fsError('EBADF', op, handle.path);
    return handle;
  }

  private inodeOf(handle: StoreFileHandle, op: string): Inode {
    const inode = this.inodes.get(this.handleOf(handle, op).ino);
    if (!inode) throw fsError('EBADF', op, handle.path);
    return inode;
  }
}

function applyChanges(names: Map<string, Entry>, op: MetaOp): void {
  for (const [path, entry] of op.changes) {
    if (entry) names.set(path, entry);
    else names.delete(path);
  }
}

function childrenOf(names: ReadonlyMap<string, Entry>, dir: string): string[] {
  return [...names.keys()].filter((path) => path !== '/' && parentOf(path) === dir).sort();
}

/** Names whose folder did not survive are unreachable after a restart. */
function pruneOrphans(names: Map<string, Entry>): void {
  const paths = [...names.keys()].sort((a, b) => a.length - b.length);
  for (const path of paths) {
    if (path !== '/' && names.get(parentOf(path))?.kind !== 'dir') names.delete(path);
  }
}

/** Durable bytes, then each pending write kept, dropped, garbled or torn. */
function survivingBytes(inode: Inode, prng: Prng, fates: WriteFate[]): Uint8Array {
  let bytes = inode.durable;
  for (const write of inode.pending) {
    const fate = prng.pick<WriteFate>(['kept', 'dropped', 'garbled', 'torn']);
    fates.push(fate);
    if (fate === 'kept') bytes = concatAt(bytes, write.offset, write.bytes);
    else if (fate === 'torn') bytes = concatAt(bytes, write.offset, write.bytes.subarray(0, prng.int(write.bytes.length + 1)));
    else if (fate === 'garbled') bytes = concatAt(bytes, write.offset, garble(write.bytes, prng));
  }
  return bytes;
}

/** A write that reached the disk damaged: a random stretch of it replaced by noise. */
function garble(bytes: Uint8Array, prng: Prng): Uint8Array {
  const out = bytes.slice();
  if (out.length === 0) return out;
  const start = prng.int(out.length);
  const length = 1 + prng.int(Math.min(64, out.length - start));
  out.set(prng.bytes(length), start);
  return out;
}
