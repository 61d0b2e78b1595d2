import type { z } from 'zod';
import { isNotFound, joinPath, type StoreFs } from './fs-port';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The name of the temp file of an atomic write, in the target's own folder: a fixed length (22
 * characters) whatever the target's name, so any name the file system takes can be written.
 */
export function tempName(): string {
  return `.ac-${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 14)}.tmp`;
}

/** Writes bytes to a new file; `durable`: every byte synced before it is closed. */
export async function writeNewFile(fs: StoreFs, path: string, bytes: Uint8Array, durable = true): Promise<void> {
  const handle = await fs.openExclusive(path);
  try {
    await fs.write(handle, bytes);
    if (durable) await fs.sync(handle);
  } finally {
    await fs.close(handle);
  }
}

/**
 * Replaces dir/name atomically: temp file, fsync, rename, fsync the folder. Not `durable`: no
 * fsyncs, for caches the journal can rebuild (a crash may leave the old file, or none, never a part of one).
 */
export async function replaceFileAtomic(
  fs: StoreFs,
  dir: string,
  name: string,
  content: Uint8Array | string,
  durable = true,
): Promise<void> {
  const bytes = typeof content === 'string' ? encoder.encode(content) : content;
  const temp = joinPath(dir, tempName());
  try {
    await writeNewFile(fs, temp, bytes, durable);
    await fs.rename(temp, joinPath(dir, name));
  } catch (error) {
    await fs.unlink(temp).catch(() => undefined);
    throw error;
  }
  if (durable) await fs.syncDir(dir);
}

export async function readIfExists(fs: StoreFs, path: string): Promise<Uint8Array | null> {
  return fs.readFile(path).catch((error: unknown) => (isNotFound(error) ? null : Promise.reject(error)));
}

/** `bytes` as JSON that matches `schema`, or null when they are not. */
export function parseJsonAs<T>(bytes: Uint8Array, schema: z.ZodType<T>): T | null {
  try {
    return schema.parse(JSON.parse(decoder.decode(bytes)));
  } catch {
    return null;
  }
}
