import { windowsPathProblem } from '../../../src/host/node/path-rules';
import { createHash } from 'node:crypto';
import type { DirEntry, FileStat, LiveFile, Log, LogLevel, Workspace } from '../../../src/core/ports';
import { PathRefusedError, StaleContentError } from '../../../src/core/ports';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import type { BlobStore } from '../../../src/core/patches/record';
import type { NewRecord, StoredRecord } from '../../../src/core/store/records';

interface MemoryFile {
  disk: Uint8Array;
  /** An open editor buffer with unsaved edits; the live content when present. */
  buffer?: Uint8Array;
}

/** In-memory Workspace: a file has disk bytes and optionally a dirty buffer (the live content). */
export class MemoryWorkspace implements Workspace {
  readonly roots = ['/ws'];
  readonly files = new Map<string, MemoryFile>();
  writes = 0;

  async normalize(path: string, intent?: 'write'): Promise<string> {
    const clean = path.replace(/\\/g, '/').replace(/^\.\//, '');
    if (clean.startsWith('/') || clean.split('/').includes('..')) throw new PathRefusedError(path, 'outside the workspace');
    // As strict as the real path rules: a name Windows refuses is never written.
    const windows = intent === 'write' ? windowsPathProblem(clean) : undefined;
    if (windows !== undefined) throw new PathRefusedError(path, windows);
    return clean;
  }

  async read(path: string): Promise<LiveFile | null> {
    const file = this.files.get(path);
    if (file === undefined) return null;
    const bytes = file.buffer ?? file.disk;
    return { path, bytes, hash: hashContent(bytes), source: file.buffer ? 'buffer' : 'disk', dirty: file.buffer !== undefined };
  }

  private liveHash(path: string): string {
    const file = this.files.get(path);
    return file === undefined ? ABSENT : hashContent(file.buffer ?? file.disk);
  }

  async write(path: string, bytes: Uint8Array, expectedBeforeHash: string): Promise<LiveFile> {
    await this.normalize(path, 'write');
    const actual = this.liveHash(path);
    if (actual !== expectedBeforeHash) throw new StaleContentError(path, expectedBeforeHash, actual);
    const file = this.files.get(path);
    // Like the editor adapter: a dirty buffer receives the edit and stays unsaved.
    if (file?.buffer !== undefined) file.buffer = bytes.slice();
    else this.files.set(path, { disk: bytes.slice() });
    this.writes++;
    return (await this.read(path))!;
  }

  async delete(path: string, expectedBeforeHash: string): Promise<void> {
    const actual = this.liveHash(path);
    if (actual !== expectedBeforeHash) throw new StaleContentError(path, expectedBeforeHash, actual);
    this.files.delete(path);
    this.writes++;
  }

  async list(): Promise<DirEntry[]> {
    return [...this.files.keys()].map((name) => ({ name, kind: 'file' as const }));
  }

  async stat(path: string): Promise<FileStat | null> {
    const file = this.files.get(path);
    return file === undefined ? null : { kind: 'file', size: (file.buffer ?? file.disk).length, mtimeMs: 0 };
  }

  /** The user saves to disk (no buffer left). */
  userSave(path: string, bytes: Uint8Array): void {
    this.files.set(path, { disk: bytes.slice() });
  }

  /** The user types in an open buffer without saving. */
  userType(path: string, bytes: Uint8Array): void {
    const file = this.files.get(path);
    if (file === undefined) this.files.set(path, { disk: new Uint8Array(0), buffer: bytes.slice() });
    else file.buffer = bytes.slice();
  }

  live(path: string): Uint8Array | null {
    const file = this.files.get(path);
    return file === undefined ? null : (file.buffer ?? file.disk);
  }
}

export class MemoryBlobs implements BlobStore {
  readonly blobs = new Map<string, Uint8Array>();
  async putBlob(bytes: Uint8Array): Promise<string> {
    const hash = createHash('sha256').update(bytes).digest('hex');
    this.blobs.set(hash, bytes.slice());
    return hash;
  }
  async getBlob(hash: string): Promise<Uint8Array> {
    const bytes = this.blobs.get(hash);
    if (bytes === undefined) throw new Error(`no blob ${hash}`);
    return bytes;
  }
}

export class MemoryJournal {
  readonly records: StoredRecord[] = [];
  async append(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    const stored = records.map((r) => ({ ...r, v: 1, at: 0, seq: this.records.length + 1 }) as StoredRecord);
    for (const [i, r] of stored.entries()) (r as { seq: number }).seq = this.records.length + i + 1;
    this.records.push(...stored);
    return stored;
  }
}

export class MemoryLog implements Log {
  readonly lines: { level: LogLevel; message: string }[] = [];
  log(level: LogLevel, message: string): void {
    this.lines.push({ level, message });
  }
}

let counter = 0;
export const newId = (): string => `id${++counter}`;
export const fixedClock = { now: () => 1_700_000_000_000 };
export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
export const text = (bytes: Uint8Array | null): string | null => (bytes === null ? null : new TextDecoder().decode(bytes));
