import { StoreError } from './contract';
import { createFileDurably, replaceFileAtomic } from './atomic-file';
import { isNotFound, joinPath, type StoreFs } from './fs-port';
import { sha256Hex } from './hash';
import { BLOB_HASH } from './refs';

/** Content-addressed blobs: blobs/ab/<sha256>, each durable before its hash is returned. */
export class FileBlobs {
  /** Blobs this store wrote (or rewrote) itself, durably: a put of one of them does nothing. */
  private readonly known = new Set<string>();
  private readonly storing = new Map<string, Promise<void>>();
  private readonly dirsMade = new Set<string>();
  private listedDirs: Promise<Set<string>> | undefined;

  constructor(
    private readonly fs: StoreFs,
    readonly root: string,
  ) {}

  pathOf(hash: string): string {
    return joinPath(this.root, hash.slice(0, 2), hash);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const hash = sha256Hex(bytes);
    if (this.known.has(hash)) return hash;
    // One store per hash at a time: a second put of the same bytes (before and after alike) waits
    // for the first instead of finding its file half written.
    let storing = this.storing.get(hash);
    if (storing === undefined) {
      storing = this.store(hash, bytes).finally(() => this.storing.delete(hash));
      this.storing.set(hash, storing);
    }
    await storing;
    return hash;
  }

  /**
   * Written straight under its final name (exclusive create, file and folder fsynced side by
   * side): a crash may leave it torn there, which `get` detects by its hash. So a blob found
   * already there is never trusted, whatever its size (it may be torn, or written but not yet
   * fsynced by a process that died): it is replaced, temp + fsync + rename + folder fsync.
   */
  private async store(hash: string, bytes: Uint8Array): Promise<void> {
    const dir = joinPath(this.root, hash.slice(0, 2));
    const prefix = await this.ensureDir(dir);
    // A new prefix folder's own name is made durable while the blob is written into it;
    // the blob is stored only once both are on disk.
    const written = (async () => {
      if (!(await createFileDurably(this.fs, dir, hash, bytes))) await replaceFileAtomic(this.fs, dir, hash, bytes);
    })();
    const [blob, folder] = await Promise.allSettled([written, prefix.durable]);
    if (blob.status === 'rejected') throw blob.reason;
    if (folder.status === 'rejected') throw folder.reason;
    this.dirsMade.add(dir);
    this.known.add(hash);
  }

  async get(hash: string): Promise<Uint8Array> {
    if (!BLOB_HASH.test(hash)) throw new StoreError(`not a blob hash: ${hash}`, 'invalid');
    let bytes: Uint8Array;
    try {
      bytes = await this.fs.readFile(this.pathOf(hash));
    } catch (error) {
      if (isNotFound(error)) throw new StoreError(`blob ${hash} not found`, 'not_found', this.pathOf(hash));
      throw error;
    }
    if (sha256Hex(bytes) !== hash) throw new StoreError(`blob ${hash} does not match its hash`, 'damaged', this.pathOf(hash), 0);
    return bytes;
  }

  /** Whether a file holds the name; `known` is kept for blobs this store put itself, durable and whole. */
  async has(hash: string): Promise<boolean> {
    if (this.known.has(hash)) return true;
    return (await this.fs.stat(this.pathOf(hash))) !== null;
  }

  /** Every blob with its size and age. */
  async list(): Promise<{ hash: string; size: number; mtimeMs: number }[]> {
    const out: { hash: string; size: number; mtimeMs: number }[] = [];
    for (const prefix of await this.readdirOrEmpty(this.root)) {
      for (const name of await this.readdirOrEmpty(joinPath(this.root, prefix))) {
        if (!BLOB_HASH.test(name)) continue;
        const st = await this.fs.stat(this.pathOf(name));
        if (st) out.push({ hash: name, size: st.size, mtimeMs: st.mtimeMs });
      }
    }
    return out;
  }

  async remove(hash: string): Promise<void> {
    this.known.delete(hash);
    await this.fs.unlink(this.pathOf(hash));
  }

  private async readdirOrEmpty(dir: string): Promise<string[]> {
    try {
      return await this.fs.readdir(dir);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }

  /** Prefix folders that exist, listed once per store instead of checked once per prefix. */
  private async existingDirs(): Promise<ReadonlySet<string>> {
    this.listedDirs ??= this.readdirOrEmpty(this.root).then((names) => new Set(names.map((name) => joinPath(this.root, name))));
    try {
      return await this.listedDirs;
    } catch (error) {
      this.listedDirs = undefined;
      throw error;
    }
  }

  /** Creates dir when missing; `durable` is the pending fsync of the blobs folder that makes it durable. */
  private async ensureDir(dir: string): Promise<{ durable: Promise<void> | undefined }> {
    if (this.dirsMade.has(dir) || (await this.existingDirs()).has(dir)) return { durable: undefined };
    await this.fs.mkdirp(dir);
    const durable = this.fs.syncDir(this.root);
    durable.catch(() => undefined); // awaited by put, unless put already failed for another reason
    return { durable };
  }
}
