import { StoreError } from '../contract';
import { parseJsonAs, readIfExists, replaceFileAtomic, tempName, writeNewFile } from '../atomic-file';
import {
  DAMAGE_DOC,
  ListingRow,
  type DeviceWatch,
  type BlobEntry,
  type DeviceGroup,
  type DeviceRun,
  type JournalDevice,
  type LeaseRead,
  type NewListingRow,
} from '../device';
import { isExists, isNotFound, joinPath, mkdirpDurable, readdirOrEmpty, type StoreFileHandle, type StoreFs } from '../fs-port';
import { LeaseFile, leaseLost, sameLease, type LeaseInfo } from '../lease-policy';
import { FORMAT_VERSION } from '../records';
import { BLOB_HASH } from '../refs';
import { RUN_ID } from '../run-id';

import { AppendNotice } from './append-notice';

// The file device: one folder per run under runs/ (journal.jsonl, lease.json, state.json as the
// listing row, and the documents: snapshots, facts logs, damage.json) and blobs/ab/<sha256>.
// A lease only matters among live processes, which all see the same page cache; a power loss
// leaves none alive. So its name is never made durable (no fsync of the folder after a link or an
// unlink): after a power loss it is there or not, and one that is names a holder that is gone.
// Its content is synced before the name appears, so a lease file is never read half written.

export const JOURNAL = 'journal.jsonl';
export const STATE = 'state.json';
export const LEASE = 'lease.json';
const encoder = new TextEncoder();
const DOC_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** A document's name: a plain name that is none of the run folder's own files (nor a lease's temporary one). */
const isDocName = (name: string): boolean => DOC_NAME.test(name) && name !== JOURNAL && name !== STATE && !name.startsWith(LEASE);

export class FileJournalDevice implements JournalDevice {
  readonly runsDir: string;
  readonly blobsDir: string;
  readonly pause: (() => Promise<void>) | undefined;
  /** Tells other holders' appends from this object's own. */
  private readonly appends: AppendNotice;
  /** Open journals of this object's writers, by run. */
  private readonly handles = new Map<string, Promise<StoreFileHandle>>();
  /** Blobs this object put, durable and whole: a put or a check of one of them does nothing. */
  private readonly knownBlobs = new Set<string>();
  /** Prefix folders of blobs this object made durable (created, and their name in blobs/ fsynced). */
  private readonly blobDirs = new Set<string>();
  private rootReady = false;

  constructor(
    readonly fs: StoreFs,
    readonly root: string,
  ) {
    this.runsDir = joinPath(root, 'runs');
    this.blobsDir = joinPath(root, 'blobs');
    this.pause = fs.yieldToEventLoop?.bind(fs);
    this.appends = new AppendNotice(fs, this.runsDir);
  }

  runDir(runId: string): string {
    if (!RUN_ID.test(runId)) throw new StoreError(`not a valid run id: ${JSON.stringify(runId)}`, 'invalid');
    return joinPath(this.runsDir, runId);
  }

  journalName(runId: string): string {
    return joinPath(this.runDir(runId), JOURNAL);
  }

  private async ensureRoot(): Promise<void> {
    if (this.rootReady) return;
    // The store folder itself is often new (VS Code's storageUri, the CLI's --store): its name must be durable too.
    await mkdirpDurable(this.fs, this.runsDir);
    await mkdirpDurable(this.fs, this.blobsDir);
    this.rootReady = true;
  }

  async createRun(runId: string, bytes: Uint8Array, listing: NewListingRow, lease: LeaseInfo | null): Promise<void> {
    const dir = this.runDir(runId);
    const journal = this.journalName(runId);
    const exists = () => new StoreError(`run ${runId} already exists`, 'invalid', journal);
    await this.ensureRoot();
    if (await this.fs.stat(journal)) throw exists();
    await this.fs.mkdirp(dir);
    await this.fs.syncDir(this.runsDir);
    if (lease && !(await this.publishLease(dir, lease)))
      throw new StoreError(`run ${runId} is held by another writer`, 'lease_held', journal);
    this.appends.wrote(runId, bytes.length);
    await writeNewFile(this.fs, journal, bytes).catch((error: unknown) => Promise.reject(isExists(error) ? exists() : error));
    await this.fs.syncDir(dir);
    await this.writeListing(runId, listing, true);
  }

  async journalSize(runId: string): Promise<number | null> {
    return (await this.fs.stat(this.journalName(runId)))?.size ?? null;
  }

  async readJournal(runId: string, from = 0, end?: number): Promise<Uint8Array> {
    const journal = this.journalName(runId);
    const length = end === undefined ? undefined : Math.max(0, end - from);
    try {
      // A read from the start to the end is a whole read (readFile); a part is read with readFrom where the port has it.
      const part = (from > 0 || length !== undefined) && this.fs.readFrom;
      const read = part ? await this.fs.readFrom!(journal, from, length) : (await this.fs.readFile(journal)).subarray(from);
      return length === undefined ? read : read.subarray(0, length);
    } catch (error) {
      throw isNotFound(error) ? new StoreError(`run ${runId} not found`, 'not_found', journal) : error;
    }
  }

  /** The critical section: the holder and generation, the journal's size, then the write, with nothing else awaited between them. */
  async appendGroup(runId: string, group: DeviceGroup, held: LeaseInfo, listing?: NewListingRow): Promise<LeaseInfo> {
    const journal = this.journalName(runId);
    const handle = await (this.handles.get(runId) ?? this.handles.set(runId, this.fs.openAppend(journal)).get(runId)!);
    const [lease, size] = await Promise.all([this.checkHolder(runId, held), this.fs.size(handle)]);
    if (size !== group.at)
      throw new StoreError(
        `the journal changed under this writer (${size} bytes, expected ${group.at}); reopen the run`,
        'lease_lost',
        journal,
      );
    this.appends.wrote(runId, size + group.bytes.length);
    await this.fs.write(handle, group.bytes);
    await this.fs.sync(handle);
    // A listing cache: the journal stays the truth, and a failed write is retried with the next.
    if (listing) await this.writeListing(runId, listing, false).catch(() => undefined);
    return lease;
  }

  async truncateJournal(runId: string, length: number): Promise<void> {
    this.appends.wrote(runId, length);
    await this.fs.truncate(this.journalName(runId), length);
  }

  async closeJournal(runId: string): Promise<void> {
    const handle = this.handles.get(runId);
    this.handles.delete(runId);
    if (handle) await handle.then((h) => this.fs.close(h)).catch(() => undefined);
  }

  async dispose(): Promise<void> {
    for (const runId of [...this.handles.keys()]) await this.closeJournal(runId);
  }

  async readLease(runId: string): Promise<LeaseRead> {
    const path = joinPath(this.runDir(runId), LEASE);
    const bytes = await readIfExists(this.fs, path);
    if (bytes === null) return { kind: 'none' };
    const lease = parseJsonAs(bytes, LeaseFile);
    if (lease) return { kind: 'held', lease };
    const st = await this.fs.stat(path);
    return st ? { kind: 'unreadable', since: st.mtimeMs } : { kind: 'none' };
  }

  private async checkHolder(runId: string, held: LeaseInfo): Promise<LeaseInfo> {
    const read = await this.readLease(runId);
    if (read.kind === 'held' && sameLease(read.lease, held)) return read.lease;
    throw leaseLost(joinPath(this.runDir(runId), LEASE), read);
  }

  async swapLease(runId: string, expected: LeaseRead, next: LeaseInfo | null): Promise<boolean> {
    const dir = this.runDir(runId);
    if (expected.kind === 'none') return next === null || this.publishLease(dir, next);
    const renewal = expected.kind === 'held' && next?.holderId === expected.lease.holderId && next.generation === expected.lease.generation;
    if (renewal || (next === null && expected.kind === 'held')) {
      const read = await this.readLease(runId);
      if (read.kind !== 'held' || !sameLease(read.lease, expected.lease)) return false;
      if (next) await replaceFileAtomic(this.fs, dir, LEASE, JSON.stringify(next));
      else await this.unlink(joinPath(dir, LEASE));
      return true;
    }
    return (await this.setAside(dir, expected)) && (next === null || this.publishLease(dir, next));
  }

  /** Publishes a lease file that did not exist: the content is complete the instant the name appears. */
  private async publishLease(dir: string, lease: LeaseInfo): Promise<boolean> {
    const temp = joinPath(dir, tempName());
    await writeNewFile(this.fs, temp, encoder.encode(JSON.stringify(lease)));
    try {
      await this.fs.link(temp, joinPath(dir, LEASE));
      return true;
    } catch (error) {
      if (isExists(error)) return false;
      throw error;
    } finally {
      await this.fs.unlink(temp).catch(() => undefined);
    }
  }

  /**
   * Moves the lease read as `judged` out of the way. Only one of several racing processes can
   * rename the same file; the winner checks it moved that lease, and puts back anything else.
   */
  private async setAside(dir: string, judged: LeaseRead): Promise<boolean> {
    const path = joinPath(dir, LEASE);
    const aside = joinPath(dir, `${LEASE}.aside-${tempName()}`);
    try {
      await this.fs.rename(path, aside);
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    const moved = await readIfExists(this.fs, aside);
    const lease = moved && parseJsonAs(moved, LeaseFile);
    const same = judged.kind !== 'held' ? lease === null : lease !== null && sameLease(lease, judged.lease);
    if (!same && moved !== null) await this.fs.link(aside, path).catch(() => undefined);
    await this.fs.unlink(aside).catch(() => undefined);
    return same;
  }

  private docPath(runId: string, name: string): string {
    if (!isDocName(name)) throw new StoreError(`not a document name: ${JSON.stringify(name)}`, 'invalid');
    return joinPath(this.runDir(runId), name);
  }

  async putDoc(runId: string, name: string, bytes: Uint8Array, durable: boolean): Promise<void> {
    this.docPath(runId, name);
    await replaceFileAtomic(this.fs, this.runDir(runId), name, bytes, durable);
  }

  async appendDoc(runId: string, name: string, bytes: Uint8Array): Promise<void> {
    const handle = await this.fs.openAppend(this.docPath(runId, name));
    try {
      await this.fs.write(handle, bytes);
    } finally {
      await this.fs.close(handle);
    }
  }

  async getDoc(runId: string, name: string): Promise<Uint8Array | null> {
    return readIfExists(this.fs, this.docPath(runId, name));
  }

  async listDocs(runId: string, prefix: string): Promise<string[]> {
    const names = await readdirOrEmpty(this.fs, this.runDir(runId));
    return names.filter((name) => name.startsWith(prefix) && isDocName(name));
  }

  async removeDoc(runId: string, name: string): Promise<void> {
    await this.unlink(this.docPath(runId, name));
  }

  private async unlink(path: string): Promise<void> {
    await this.fs.unlink(path).catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
  }

  writeListing(runId: string, row: NewListingRow, durable: boolean): Promise<void> {
    return replaceFileAtomic(this.fs, this.runDir(runId), STATE, JSON.stringify({ v: FORMAT_VERSION, ...row }), durable);
  }

  async readListing(runId: string): Promise<ListingRow | null> {
    const bytes = await readIfExists(this.fs, joinPath(this.runDir(runId), STATE));
    const row = bytes && parseJsonAs(bytes, ListingRow);
    return row && row.v <= FORMAT_VERSION ? row : null;
  }

  async listRuns(): Promise<DeviceRun[]> {
    const runs: DeviceRun[] = [];
    for (const runId of (await readdirOrEmpty(this.fs, this.runsDir)).sort()) {
      if (!RUN_ID.test(runId)) continue;
      const journalBytes = await this.journalSize(runId);
      if (journalBytes === null) continue;
      const [lease, listing, damage] = await Promise.all([this.readLease(runId), this.readListing(runId), this.getDoc(runId, DAMAGE_DOC)]);
      runs.push({ runId, journalBytes, lease, listing, damage });
    }
    return runs;
  }

  async runBytes(runId: string): Promise<number> {
    const dir = this.runDir(runId);
    let bytes = 0;
    for (const name of await this.fs.readdir(dir)) bytes += (await this.fs.stat(joinPath(dir, name)))?.size ?? 0;
    return bytes;
  }

  async removeRun(runId: string): Promise<void> {
    const dir = this.runDir(runId);
    const names = await this.fs.readdir(dir);
    for (const name of [JOURNAL, ...names.filter((n) => n !== JOURNAL)]) await this.unlink(joinPath(dir, name));
    await this.fs.rmdir(dir);
    await this.fs.syncDir(this.runsDir);
  }

  private blobPath(hash: string): string {
    return joinPath(this.blobsDir, hash.slice(0, 2), hash);
  }

  /**
   * A file found under a blob's name is never trusted (a crash may have left it torn, or written
   * but not synced): a put replaces it, the safe way, and the store checks the hash of what it reads.
   */
  async putBlob(hash: string, bytes: Uint8Array): Promise<void> {
    if (this.knownBlobs.has(hash)) return;
    await this.ensureRoot();
    const dir = joinPath(this.blobsDir, hash.slice(0, 2));
    if (!this.blobDirs.has(dir)) {
      await mkdirpDurable(this.fs, dir);
      this.blobDirs.add(dir);
    }
    await replaceFileAtomic(this.fs, dir, hash, bytes);
    this.knownBlobs.add(hash);
  }

  async getBlob(hash: string): Promise<Uint8Array | null> {
    return readIfExists(this.fs, this.blobPath(hash));
  }

  async missingBlobs(hashes: readonly string[]): Promise<string[]> {
    const missing: string[] = [];
    for (const hash of hashes) if (!this.knownBlobs.has(hash) && (await this.fs.stat(this.blobPath(hash))) === null) missing.push(hash);
    return missing;
  }

  async listBlobs(): Promise<BlobEntry[]> {
    const blobs: BlobEntry[] = [];
    for (const prefix of await readdirOrEmpty(this.fs, this.blobsDir)) {
      for (const name of await readdirOrEmpty(this.fs, joinPath(this.blobsDir, prefix))) {
        const st = BLOB_HASH.test(name) ? await this.fs.stat(this.blobPath(name)) : null;
        if (st) blobs.push({ hash: name, size: st.size, putAt: st.mtimeMs });
      }
    }
    return blobs;
  }

  async removeBlob(hash: string): Promise<void> {
    this.knownBlobs.delete(hash);
    await this.fs.unlink(this.blobPath(hash));
  }

  /** Watches runs/ once it exists (a new store's folder is made first); tells nothing once closed (a check may still be under way). */
  watch(kind: 'appends' | 'leases', listener: (runId: string) => void): DeviceWatch | undefined {
    if (!this.fs.watch) return undefined;
    let inner: { close(): void } | undefined;
    let closed = false;
    const tell = (runId: string): void => {
      if (!closed) listener(runId);
    };
    const started = this.ensureRoot().then(() => {
      if (!closed) inner = kind === 'appends' ? this.appends.watch(tell) : this.appends.watchLeases(tell);
    });
    return {
      whenListening: () => started,
      close: () => {
        closed = true;
        inner?.close();
      },
    };
  }
}
