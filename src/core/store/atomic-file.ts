import { isExists, joinPath, type StoreFileHandle, type StoreFs } from './fs-port';

const encoder = new TextEncoder();

export function tempName(name: string): string {
  return `${name}.${globalThis.crypto.randomUUID().slice(0, 8)}.tmp`;
}

/** Writes bytes to a new file, durably: every byte synced before it is closed. */
export async function writeNewFile(fs: StoreFs, path: string, bytes: Uint8Array): Promise<void> {
  const handle = await fs.openExclusive(path);
  try {
    await fs.write(handle, bytes);
    await fs.sync(handle);
  } finally {
    await fs.close(handle);
  }
}

/**
 * Creates dir/name, which must not exist, durably: the file's fsync and the folder's fsync run
 * side by side, and both have finished when it resolves. Returns false (nothing written) when
 * the name exists. A crash before it resolves may leave a torn file under the final name, so
 * only content that can prove itself (a content-addressed blob, checked against its hash when
 * read) may be written this way. A failed write leaves what it wrote: removing it could remove
 * a sound copy another process put there meanwhile.
 */
export async function createFileDurably(fs: StoreFs, dir: string, name: string, bytes: Uint8Array): Promise<boolean> {
  let handle: StoreFileHandle;
  try {
    handle = await fs.openExclusive(joinPath(dir, name));
  } catch (error) {
    if (isExists(error)) return false;
    throw error;
  }
  try {
    await fs.write(handle, bytes);
  } catch (error) {
    await fs.close(handle).catch(() => undefined);
    throw error;
  }
  const synced = await Promise.allSettled([fs.sync(handle), fs.syncDir(dir)]);
  // Once its fsync returned the content is on disk: the close need not hold the caller up.
  const closed = fs.close(handle);
  closed.catch(() => undefined);
  for (const step of synced) if (step.status === 'rejected') throw step.reason;
  return true;
}

/** Replaces dir/name atomically: temp file, fsync, rename, fsync the folder. */
export async function replaceFileAtomic(fs: StoreFs, dir: string, name: string, content: Uint8Array | string): Promise<void> {
  const bytes = typeof content === 'string' ? encoder.encode(content) : content;
  const temp = joinPath(dir, tempName(name));
  try {
    await writeNewFile(fs, temp, bytes);
    await fs.rename(temp, joinPath(dir, name));
  } catch (error) {
    await fs.unlink(temp).catch(() => undefined);
    throw error;
  }
  await fs.syncDir(dir);
}

/** Bytes of a file, or null when it does not exist. */
export async function readIfExists(fs: StoreFs, path: string): Promise<Uint8Array | null> {
  try {
    return await fs.readFile(path);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return null;
    throw error;
  }
}
