import { z } from 'zod';
import { StoreError } from './contract';
import type { JournalDevice, LeaseRead } from './device';

export const DEFAULT_LEASE_TIMEOUT_MS = 15_000;

/** Who this process is, to tell a dead holder on the same host from a live one. */
export interface ProcessIdentity {
  readonly pid: number;
  readonly hostname: string;
  /** When this process started, as the host tells it (Linux: field 22 of /proc/self/stat); absent when unknown. */
  readonly startTime?: string;
  /** False only when the process surely does not exist. */
  isAlive(pid: number): boolean;
  /**
   * The start time of the process that has this pid now, in the form of `startTime`; undefined
   * when unknown. With it a live pid proves a live holder (and a reused pid a dead one).
   */
  startTimeOf?(pid: number): string | undefined;
}

/** Without a host to ask, nothing is known dead: only the timeout makes a lease stale. */
export const unknownProcess: ProcessIdentity = {
  pid: typeof process === 'object' ? process.pid : 0,
  hostname: 'unknown-host',
  isAlive: () => true,
};

/** lease.json: who writes a run. */
export const LeaseFile = z.object({
  holderId: z.string().min(1),
  pid: z.number().int(),
  hostname: z.string(),
  /** The holder process's start time, when its host tells it (a reused pid is not the holder). */
  startTime: z.string().optional(),
  acquiredAt: z.number(),
  /** The holder's heartbeat: renewed on a timer while it lives. */
  renewedAt: z.number(),
  /** Goes up by one each time the lease changes hands; every append checks it. */
  generation: z.number().int().nonnegative().default(0),
  /** Written by a take-over: the holder before it is fenced off, the lease is free to take. */
  fenced: z.boolean().optional(),
});
export type LeaseInfo = z.infer<typeof LeaseFile>;

/** The same holder, generation and fence: a writer's own lease is never a fence, so a fenced one is another's. */
export function sameLease(a: LeaseInfo, b: LeaseInfo): boolean {
  return a.holderId === b.holderId && a.generation === b.generation && a.fenced === b.fenced;
}

/** What the holder's process is, as far as this process can tell. */
function holderProcess(lease: LeaseInfo, me: ProcessIdentity): 'alive' | 'dead' | 'unknown' {
  if (lease.hostname !== me.hostname) return 'unknown';
  // This process's pid: an earlier process's only when both start times are known and differ.
  if (lease.pid === me.pid)
    return lease.startTime !== undefined && me.startTime !== undefined && lease.startTime !== me.startTime ? 'dead' : 'unknown';
  if (!me.isAlive(lease.pid)) return 'dead';
  const now = lease.startTime !== undefined ? me.startTimeOf?.(lease.pid) : undefined;
  return now === undefined ? 'unknown' : now === lease.startTime ? 'alive' : 'dead';
}

export function newHolderId(): string {
  return globalThis.crypto.randomUUID();
}

/** A writer renews its lease by itself when it appends after half the timeout. */
export function leaseNeedsRenewal(lease: LeaseInfo, now: number, timeoutMs: number): boolean {
  return now - lease.renewedAt >= timeoutMs / 2;
}

/** How often a writer renews its lease on its timer: well inside the timeout. */
export function renewIntervalMs(timeoutMs: number): number {
  return Math.max(1, Math.floor(timeoutMs / 3));
}

/** The holder in words, for the errors and views that name it: "pid 4242 on box, heartbeat 3 s ago". */
export function describeHolder(lease: LeaseInfo, now: number): string {
  const ago = Math.max(0, Math.round((now - lease.renewedAt) / 1000));
  return `pid ${lease.pid} on ${lease.hostname}, heartbeat ${ago} s ago`;
}

// A run's lease over the device: the rules (who is live, who may take over, what a fence is) are
// here; the device only compares and sets (swapLease).

export interface LeaseContext {
  readonly device: JournalDevice;
  readonly timeoutMs: number;
  readonly me: ProcessIdentity;
  readonly now: () => number;
  /** Holders of this process whose writer stopped on a failure: their lease may be taken at once. */
  readonly abandoned: ReadonlySet<string>;
}

/**
 * The lease when a live writer holds it ('unreadable' while a half-written one is young), else null.
 * A lease is taken over only when its holder is gone: a dead process on this host (pid and start
 * time), else a heartbeat older than the timeout. A live holder on this host is never stale: only
 * a person's take-over (a fenced lease) frees it, or its own writer's failure (abandoned).
 */
export function liveLease(ctx: LeaseContext, read: LeaseRead): LeaseInfo | 'unreadable' | null {
  if (read.kind === 'none') return null;
  if (read.kind === 'unreadable') return ctx.now() - read.since <= ctx.timeoutMs ? 'unreadable' : null;
  const { lease } = read;
  if (lease.fenced === true || ctx.abandoned.has(lease.holderId)) return null;
  const holder = holderProcess(lease, ctx.me);
  return (holder === 'unknown' ? ctx.now() - lease.renewedAt <= ctx.timeoutMs : holder === 'alive') ? lease : null;
}

/** holderId's lease, taken by this process now, in the generation after `read`'s. */
function leaseAfter(ctx: LeaseContext, read: LeaseRead, holderId: string): LeaseInfo {
  const last = read.kind === 'held' ? read.lease.generation : read.kind === 'none' ? read.generation : undefined;
  const now = ctx.now();
  return {
    holderId,
    pid: ctx.me.pid,
    hostname: ctx.me.hostname,
    ...(ctx.me.startTime !== undefined ? { startTime: ctx.me.startTime } : {}),
    acquiredAt: now,
    renewedAt: now,
    generation: last === undefined ? 0 : last + 1,
  };
}

/** The lease that takes over from `read` (a free, stale or abandoned one) for holderId; null when a live writer holds it. */
export function takeOver(ctx: LeaseContext, read: LeaseRead, holderId: string): LeaseInfo | null {
  return liveLease(ctx, read) === null ? leaseAfter(ctx, read, holderId) : null;
}

/** Takes the lease for holderId: free, stale, or abandoned by this process; else lease_held. */
export async function acquireLease(ctx: LeaseContext, runId: string, holderId: string): Promise<LeaseInfo> {
  const where = ctx.device.journalName(runId);
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = await ctx.device.readLease(runId);
    const live = liveLease(ctx, read);
    if (live !== null) {
      const who =
        live === 'unreadable' ? 'a writer whose lease is being written' : `another live writer (${describeHolder(live, ctx.now())})`;
      throw new StoreError(`run is held by ${who}`, 'lease_held', where);
    }
    const next = leaseAfter(ctx, read, holderId);
    if (await ctx.device.swapLease(runId, read, next)) return next;
  }
  throw new StoreError('another process took the lease at the same time', 'lease_held', where);
}

/** lease_lost for a writer whose lease now reads as `read` (`where`: the file or journal the error names). */
export function leaseLost(where: string, read: LeaseRead): StoreError {
  const by =
    read.kind === 'held' && read.lease.fenced === true ? 'taken over (from another window or process)' : 'taken over by another writer';
  return new StoreError(`the lease of this run was ${by}; this writer stopped writing`, 'lease_lost', where);
}

/** Renews the lease if holder and generation still hold it, else lease_lost. */
export async function renewLease(ctx: LeaseContext, runId: string, held: LeaseInfo): Promise<LeaseInfo> {
  const read = await ctx.device.readLease(runId);
  if (read.kind !== 'held' || !sameLease(read.lease, held)) throw leaseLost(ctx.device.journalName(runId), read);
  const renewed = { ...read.lease, renewedAt: ctx.now() };
  if (!(await ctx.device.swapLease(runId, read, renewed)))
    throw leaseLost(ctx.device.journalName(runId), await ctx.device.readLease(runId));
  return renewed;
}

/** Lets the lease go when holderId still holds it; nothing otherwise. */
export async function releaseLease(ctx: LeaseContext, runId: string, holderId: string): Promise<void> {
  const read = await ctx.device.readLease(runId);
  if (read.kind === 'held' && read.lease.holderId === holderId) await ctx.device.swapLease(runId, read, null);
}

/**
 * A take-over: the lease becomes a fenced one of the next generation, so its holder's next check
 * (append or renewal) fails and the lease is free for the next acquireLease. Nothing to do when
 * no one holds the run.
 */
export async function fenceLease(ctx: LeaseContext, runId: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = await ctx.device.readLease(runId);
    if (read.kind === 'none' || (read.kind === 'held' && read.lease.fenced === true)) return;
    const fence: LeaseInfo = { ...leaseAfter(ctx, read, `fence-${newHolderId()}`), fenced: true };
    if (await ctx.device.swapLease(runId, read, fence)) return;
  }
}
