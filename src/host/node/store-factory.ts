import { hostname } from 'node:os';
import { FileCheckpointStore, type FileStoreOptions } from '../../core/store/file-store';
import type { ProcessIdentity } from '../../core/store/lease-policy';
import { NodeStoreFs } from './node-store-fs';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as { code?: string }).code === 'EPERM';
  }
}

export const nodeProcessIdentity: ProcessIdentity = { pid: process.pid, hostname: hostname(), isAlive };

/** The file CheckpointStore under rootDir over node:fs, with this process's identity for leases. */
export function openFileStore(
  rootDir: string,
  options: Omit<FileStoreOptions, 'fs' | 'root'> & { fs?: FileStoreOptions['fs'] } = {},
): FileCheckpointStore {
  const root = rootDir.replace(/\\/g, '/');
  return new FileCheckpointStore({ process: nodeProcessIdentity, ...options, fs: options.fs ?? new NodeStoreFs(), root });
}
