import { StoreError } from './contract';
import { replaceFileAtomic } from './atomic-file';
import { isNotFound, joinPath, type StoreFs } from './fs-port';
import { sha256Hex } from './hash';
import { BLOB_HASH } from './refs';

/** Content-addressed blobs: blobs/ab/<sha256>, each durable before its hash is returned. */
export class FileBlobs {
  private readonly known = new Set<string>();
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
    const dir = joinPath(this.root, hash.slice(0, 2));
    // The prefix folder is made (when missing) while the blob is looked for: a blob that exists has one.
    const [existing, prefix] = await Promise.all([this.fs.stat(this.pathOf(hash)), this.ensureDir(dir)]);
    if (existing?.size !== bytes.length) {
      // A new prefix folder's own name is made durable while the blob is written into it;
      // put resolves only once both are on disk.
      await Promise.all([prefix.durable, replaceFileAtomic(this.fs, dir, hash, bytes)]);
    } else {
      await prefix.durable;
    }
    this.dirsMade.add(dir);
    this.known.add(hash);
    return hash;
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

  async has(hash: string): Promise<boolean> {
    if (this.known.has(hash)) return true;
    const found = (await this.fs.stat(this.pathOf(hash))) !== null;
    if (found) this.known.add(hash);
    return found;
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
