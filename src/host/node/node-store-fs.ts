import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { StoreFileHandle, StoreFileStat, StoreFs } from '../../core/store/fs-port';

class NodeHandle implements StoreFileHandle {
  constructor(
    readonly path: string,
    readonly file: FileHandle,
  ) {}
}

function nodeHandle(handle: StoreFileHandle): NodeHandle {
  if (!(handle instanceof NodeHandle)) throw new Error(`not a handle of this port: ${handle.path}`);
  return handle;
}

async function writeAll(file: FileHandle, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await file.write(bytes, done, bytes.length - done);
    done += bytesWritten;
  }
}

/** StoreFs over node:fs/promises. */
export class NodeStoreFs implements StoreFs {
  async openAppend(path: string): Promise<StoreFileHandle> {
    return new NodeHandle(path, await fsp.open(path, 'a'));
  }
  async openExclusive(path: string): Promise<StoreFileHandle> {
    return new NodeHandle(path, await fsp.open(path, 'wx'));
  }
  async write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    await writeAll(nodeHandle(handle).file, bytes);
  }
  async sync(handle: StoreFileHandle): Promise<void> {
    await nodeHandle(handle).file.sync();
  }
  async close(handle: StoreFileHandle): Promise<void> {
    await nodeHandle(handle).file.close();
  }
  async size(handle: StoreFileHandle): Promise<number> {
    return (await nodeHandle(handle).file.stat()).size;
  }
  async readFile(path: string): Promise<Uint8Array> {
    return fsp.readFile(path);
  }
  async truncate(path: string, length: number): Promise<void> {
    const file = await fsp.open(path, 'r+');
    try {
      await file.truncate(length);
      await file.sync();
    } finally {
      await file.close();
    }
  }
  async rename(from: string, to: string): Promise<void> {
    await fsp.rename(from, to);
  }
  async link(from: string, to: string): Promise<void> {
    await fsp.link(from, to);
  }
  async syncDir(path: string): Promise<void> {
    if (process.platform === 'win32') return; // directories cannot be opened for fsync on Windows; renames are durable there
    const dir = await fsp.open(path, 'r');
    try {
      await dir.sync();
    } finally {
      // The names are durable once sync resolved: closing the folder need not hold the caller up.
      dir.close().catch(() => undefined);
    }
  }
  async mkdirp(path: string): Promise<void> {
    await fsp.mkdir(path, { recursive: true });
  }
  async readdir(path: string): Promise<string[]> {
    return fsp.readdir(path);
  }
  async stat(path: string): Promise<StoreFileStat | null> {
    try {
      const st = await fsp.stat(path);
      return { size: st.size, mtimeMs: st.mtimeMs, isDirectory: st.isDirectory() };
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') return null;
      throw error;
    }
  }
  async unlink(path: string): Promise<void> {
    await fsp.unlink(path);
  }
  async rmdir(path: string): Promise<void> {
    await fsp.rmdir(path);
  }
}
