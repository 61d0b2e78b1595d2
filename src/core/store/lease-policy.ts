import { z } from 'zod';
import type { LeaseInfo } from './contract';

export const DEFAULT_LEASE_TIMEOUT_MS = 15_000;

/** Who this process is, to tell a dead holder on the same host from a live one. */
export interface ProcessIdentity {
  readonly pid: number;
  readonly hostname: string;
  /** False only when the process surely does not exist. */
  isAlive(pid: number): boolean;
}

/** Without a host to ask, nothing is known dead: only the timeout makes a lease stale. */
export const unknownProcess: ProcessIdentity = {
  pid: typeof process === 'object' ? process.pid : 0,
  hostname: 'unknown-host',
  isAlive: () => true,
};

export const LeaseFile = z.object({
  holderId: z.string().min(1),
  pid: z.number().int(),
  hostname: z.string(),
  acquiredAt: z.number(),
  renewedAt: z.number(),
});

export function isLeaseStale(lease: LeaseInfo, now: number, timeoutMs: number, me: ProcessIdentity): boolean {
  if (now - lease.renewedAt > timeoutMs) return true;
  return lease.hostname === me.hostname && lease.pid !== me.pid && !me.isAlive(lease.pid);
}

export function newHolderId(): string {
  return globalThis.crypto.randomUUID();
}

export function newLease(holderId: string, now: number, me: ProcessIdentity): LeaseInfo {
  return { holderId, pid: me.pid, hostname: me.hostname, acquiredAt: now, renewedAt: now };
}

/** A writer renews its lease by itself when it appends after half the timeout. */
export function leaseNeedsRenewal(lease: LeaseInfo, now: number, timeoutMs: number): boolean {
  return now - lease.renewedAt >= timeoutMs / 2;
}
