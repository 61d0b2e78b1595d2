import { StoreError } from '../contract';
import { replaceFileAtomic } from '../atomic-file';
import { isNotFound, joinPath, mkdirpDurable, readdirOrEmpty, type StoreFs } from '../fs-port';
import { sha256Hex } from '../../patches/hash';
import { BLOB_HASH } from '../refs';

/**
 * Content-addressed blobs: blobs/ab/<sha256>, each durable before its hash is returned. A file
 * found under a blob's name is never trusted (a crash may have left it torn, or written but not
 * synced): a put replaces it, temp + fsync + rename + folder fsync, and `get` checks the hash.
 */
export class FileBlobs {
  /** Blobs this store put itself, durable and whole: a put or a check of one of them does nothing. */
  private readonly known = new Set<string>();
  /** Prefix folders made durable by this store (created, and their name in blobs/ fsynced). */
  private readonly dirs = new Set<string>();

  constructor(
    private readonly fs: StoreFs,
    readonly root: string,
  ) {}

  pathOf(hash: string): string {
    return joinPath(this.root, hash.slice(0, 2), hash);
  }

  /** Puts `bytes` (whose sha256 is `hash` when the caller has it). */
  async put(bytes: Uint8Array, hash = sha256Hex(bytes)): Promise<string> {
    if (this.known.has(hash)) return hash;
    const dir = joinPath(this.root, hash.slice(0, 2));
    if (!this.dirs.has(dir)) {
      await mkdirpDurable(this.fs, dir);
      this.dirs.add(dir);
    }
    await replaceFileAtomic(this.fs, dir, hash, bytes);
    this.known.add(hash);
    return hash;
  }

  async get(hash: string): Promise<Uint8Array> {
    if (!BLOB_HASH.test(hash)) throw new StoreError(`not a blob hash: ${hash}`, 'invalid');
    const bytes = await this.fs.readFile(this.pathOf(hash)).catch((error: unknown) => {
      throw isNotFound(error) ? new StoreError(`blob ${hash} not found`, 'not_found', this.pathOf(hash)) : error;
    });
    if (sha256Hex(bytes) !== hash) throw new StoreError(`blob ${hash} does not match its hash`, 'damaged', this.pathOf(hash), 0);
    return bytes;
  }

  async has(hash: string): Promise<boolean> {
    return this.known.has(hash) || (await this.fs.stat(this.pathOf(hash))) !== null;
  }

  /** Every blob with its size and age. */
  async list(): Promise<{ hash: string; size: number; mtimeMs: number }[]> {
    const out: { hash: string; size: number; mtimeMs: number }[] = [];
    for (const prefix of await readdirOrEmpty(this.fs, this.root)) {
      for (const name of await readdirOrEmpty(this.fs, joinPath(this.root, prefix))) {
        const st = BLOB_HASH.test(name) ? await this.fs.stat(this.pathOf(name)) : null;
        if (st) out.push({ hash: name, size: st.size, mtimeMs: st.mtimeMs });
      }
    }
    return out;
  }

  async remove(hash: string): Promise<void> {
    this.known.delete(hash);
    await this.fs.unlink(this.pathOf(hash));
  }
}
