import { StoreError, type LeaseInfo } from './contract';
import type { JournalDevice, LeaseRead } from './device';
import { describeHolder, isLeaseStale, newHolderId, newLease, type ProcessIdentity } from './lease-policy';

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

/** The lease when a live writer holds it ('unreadable' while a half-written one is young), else null. */
export function liveLease(ctx: LeaseContext, read: LeaseRead): LeaseInfo | 'unreadable' | null {
  if (read.kind === 'none') return null;
  if (read.kind === 'unreadable') return ctx.now() - read.since <= ctx.timeoutMs ? 'unreadable' : null;
  const live = !ctx.abandoned.has(read.lease.holderId) && !isLeaseStale(read.lease, ctx.now(), ctx.timeoutMs, ctx.me);
  return live ? read.lease : null;
}

/** The lease that takes over from `read` (a free, stale or abandoned one) for holderId, in the next generation; null when a live writer holds it. */
export function takeOver(ctx: LeaseContext, read: LeaseRead, holderId: string): LeaseInfo | null {
  if (liveLease(ctx, read) !== null) return null;
  const generation =
    read.kind === 'held' ? read.lease.generation + 1 : read.kind === 'none' && read.generation !== undefined ? read.generation + 1 : 0;
  return newLease(holderId, ctx.now(), ctx.me, generation);
}

/** Takes the lease for holderId: free, stale, or abandoned by this process; else lease_held. */
export async function acquireLease(ctx: LeaseContext, runId: string, holderId: string): Promise<LeaseInfo> {
  const where = ctx.device.journalName(runId);
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = await ctx.device.readLease(runId);
    const next = takeOver(ctx, read, holderId);
    if (!next) {
      const live = liveLease(ctx, read)!;
      const who =
        live === 'unreadable' ? 'a writer whose lease is being written' : `another live writer (${describeHolder(live, ctx.now())})`;
      throw new StoreError(`run is held by ${who}`, 'lease_held', where);
    }
    if (await ctx.device.swapLease(runId, read, next)) return next;
  }
  throw new StoreError('another process took the lease at the same time', 'lease_held', where);
}

function lost(ctx: LeaseContext, runId: string, read: LeaseRead): StoreError {
  const by =
    read.kind === 'held' && read.lease.fenced === true ? 'taken over (from another window or process)' : 'taken over by another writer';
  return new StoreError(`the lease of this run was ${by}; this writer stopped writing`, 'lease_lost', ctx.device.journalName(runId));
}

/** Renews the lease if holder and generation still hold it, else lease_lost. */
export async function renewLease(ctx: LeaseContext, runId: string, held: LeaseInfo): Promise<LeaseInfo> {
  const read = await ctx.device.readLease(runId);
  if (read.kind !== 'held' || read.lease.holderId !== held.holderId || read.lease.generation !== held.generation)
    throw lost(ctx, runId, read);
  const renewed = { ...read.lease, renewedAt: ctx.now() };
  if (!(await ctx.device.swapLease(runId, read, renewed))) throw lost(ctx, runId, await ctx.device.readLease(runId));
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
    const generation = read.kind === 'held' ? read.lease.generation + 1 : 0;
    const fence: LeaseInfo = { ...newLease(`fence-${newHolderId()}`, ctx.now(), ctx.me, generation), fenced: true };
    if (await ctx.device.swapLease(runId, read, fence)) return;
  }
}
