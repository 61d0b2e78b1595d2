import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Timers } from '../../core/ports';
import type { CheckpointStore } from '../../core/store/contract';
import { FileCheckpointStore, type FileStoreOptions } from '../../core/store/file/file-store';
import type { ProcessIdentity } from '../../core/store/lease-policy';
import { NodeStoreFs } from './node-store-fs';
import { isAlive } from './process-alive';
import { redactedAddress } from './pg/pg-names';
import type * as PgStore from './pg/pg-store';

/**
 * The start time of a process in clock ticks since boot: field 22 of /proc/PID/stat (Linux),
 * counted after the command name, which is in parentheses and may hold spaces. Undefined where
 * there is no /proc or the process is gone.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); field 22 is fields[19].
    const start = fields[19];
    return start !== undefined && /^\d+$/.test(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

function identityOf(pid: number): ProcessIdentity {
  const startTime = processStartTime(pid);
  return {
    pid,
    hostname: hostname(),
    ...(startTime !== undefined ? { startTime, startTimeOf: processStartTime } : {}),
    isAlive,
  };
}

export const nodeProcessIdentity: ProcessIdentity = identityOf(process.pid);

/** Interval timers that never keep the process alive. */
export const nodeTimers: Timers = {
  every(ms, tick) {
    const timer = setInterval(() => void tick().catch(() => undefined), ms);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
};

/** The file CheckpointStore under rootDir over node:fs, with this process's identity for leases and a heartbeat timer. */
export function openFileStore(
  rootDir: string,
  options: Omit<FileStoreOptions, 'fs' | 'root'> & { fs?: FileStoreOptions['fs'] } = {},
): FileCheckpointStore {
  const root = rootDir.replace(/\\/g, '/');
  return new FileCheckpointStore({
    process: nodeProcessIdentity,
    timers: nodeTimers,
    ...options,
    fs: options.fs ?? new NodeStoreFs(),
    root,
  });
}

/** True for a PostgreSQL store address (postgres:// or postgresql://); anything else is a folder. */
export function isPostgresAddress(address: string): boolean {
  return /^postgres(ql)?:\/\//i.test(address);
}

/** Where the run store is: a folder of the file store, or a PostgreSQL server (never taken for a path). */
export type StoreAddress = { readonly kind: 'files'; readonly dir: string } | { readonly kind: 'postgres'; readonly url: string };

/** The address a person or a setting gave (a folder, or postgres://...), typed. */
export function storeAddressOf(address: string): StoreAddress {
  return isPostgresAddress(address) ? { kind: 'postgres', url: address } : { kind: 'files', dir: address };
}

/** The address as text: a folder, or the server's URL (for the store's opener and the network proxy). */
export function storeAddressText(address: StoreAddress): string {
  return address.kind === 'files' ? address.dir : address.url;
}

/** A store address as it may be shown: a folder as it is, a server without its password. */
export function shownAddress(address: string): string {
  return isPostgresAddress(address) ? redactedAddress(address) : address;
}

/** The store at an address: a PostgreSQL server (postgres://...) or a folder of the file store. */
export function openStore(address: string): CheckpointStore & { dispose?(): Promise<void> } {
  if (!isPostgresAddress(address)) return openFileStore(address);
  // Loaded here, not at startup: a file store never loads pg (pg-names.ts says why).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { PgCheckpointStore } = require('./pg/pg-store') as typeof PgStore;
  return new PgCheckpointStore({ url: address, process: nodeProcessIdentity, timers: nodeTimers });
}
