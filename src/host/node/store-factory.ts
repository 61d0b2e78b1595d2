import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { FileCheckpointStore, type FileStoreOptions } from '../../core/store/file-store';
import type { ProcessIdentity } from '../../core/store/lease-policy';
import { NodeStoreFs } from './node-store-fs';

/** True when /proc says the process has exited and waits to be reaped (a zombie is not a live holder). */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return process.platform !== 'linux' || !isZombie(pid);
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
