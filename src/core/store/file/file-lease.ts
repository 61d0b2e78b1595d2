import { StoreError, type LeaseInfo } from '../contract';
import { parseJsonAs, readIfExists, replaceFileAtomic, tempName, writeNewFile } from '../atomic-file';
import { isExists, isNotFound, joinPath, type StoreFs } from '../fs-port';
import { describeHolder, isLeaseStale, LeaseFile, newHolderId, newLease, type ProcessIdentity } from '../lease-policy';

export const LEASE = 'lease.json';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface LeaseContext {
  readonly fs: StoreFs;
  readonly runDir: string;
  readonly timeoutMs: number;
  readonly me: ProcessIdentity;
  readonly now: () => number;
}

type LeaseRead = { kind: 'none' } | { kind: 'held'; lease: LeaseInfo } | { kind: 'unreadable'; mtimeMs: number };

async function readLeaseFile(ctx: LeaseContext): Promise<LeaseRead> {
  const path = joinPath(ctx.runDir, LEASE);
  const bytes = await readIfExists(ctx.fs, path);
  if (bytes === null) return { kind: 'none' };
  const lease = parseJsonAs(bytes, LeaseFile);
  if (lease) return { kind: 'held', lease };
  const st = await ctx.fs.stat(path);
  return st ? { kind: 'unreadable', mtimeMs: st.mtimeMs } : { kind: 'none' };
}

/** The lease when a live writer holds it ('unreadable' while a half-written one is young), else null. */
export async function liveLease(ctx: LeaseContext, abandoned: ReadonlySet<string>): Promise<LeaseInfo | 'unreadable' | null> {
  const read = await readLeaseFile(ctx);
  if (read.kind === 'none') return null;
  if (read.kind === 'unreadable') return ctx.now() - read.mtimeMs <= ctx.timeoutMs ? 'unreadable' : null;
  const live = !abandoned.has(read.lease.holderId) && !isLeaseStale(read.lease, ctx.now(), ctx.timeoutMs, ctx.me);
  return live ? read.lease : null;
}

// A lease only matters among live processes, which all see the same page cache; a power loss
// leaves none alive. So its name is never made durable (no fsync of the folder after a link or an
// unlink): after a power loss it is there or not, and one that is names a holder that is gone.
// Its content is synced before the name appears, so a lease file is never read half written.

/** Publishes a lease file that did not exist: the content is complete the instant the name appears. */
async function publish(ctx: LeaseContext, lease: LeaseInfo): Promise<boolean> {
  const temp = joinPath(ctx.runDir, tempName());
  await writeNewFile(ctx.fs, temp, encoder.encode(JSON.stringify(lease)));
  try {
    await ctx.fs.link(temp, joinPath(ctx.runDir, LEASE));
    return true;
  } catch (error) {
    if (isExists(error)) return false;
    throw error;
  } finally {
    await ctx.fs.unlink(temp).catch(() => undefined);
  }
}

/**
 * Moves a stale lease out of the way. Only one of several racing processes can rename the same
 * file; the winner checks it moved the lease it judged stale, and puts back anything else.
 */
async function setAsideStale(ctx: LeaseContext, judged: LeaseRead, holderId: string): Promise<boolean> {
  const path = joinPath(ctx.runDir, LEASE);
  const aside = joinPath(ctx.runDir, `${LEASE}.stale-${holderId}`);
  try {
    await ctx.fs.rename(path, aside);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
  const moved = await readIfExists(ctx.fs, aside);
  const sameHolder = judged.kind !== 'held' || (moved !== null && decoder.decode(moved).includes(judged.lease.holderId));
  if (!sameHolder && moved !== null) {
    await ctx.fs.link(aside, path).catch(() => undefined);
    await ctx.fs.unlink(aside).catch(() => undefined);
    return false;
  }
  await ctx.fs.unlink(aside).catch(() => undefined);
  return true;
}

/** Takes the lease for holderId: free, stale, or abandoned by this process; else lease_held. */
export async function acquireLease(ctx: LeaseContext, holderId: string, abandoned: ReadonlySet<string>): Promise<LeaseInfo> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await readLeaseFile(ctx);
    if (current.kind !== 'none') {
      const live = await liveLease(ctx, abandoned);
      if (live !== null) {
        const who =
          live === 'unreadable' ? 'a writer whose lease is being written' : `another live writer (${describeHolder(live, ctx.now())})`;
        throw new StoreError(`run is held by ${who}`, 'lease_held', joinPath(ctx.runDir, LEASE));
      }
      if (!(await setAsideStale(ctx, current, holderId))) continue;
    }
    const generation = current.kind === 'held' ? current.lease.generation + 1 : 0;
    const lease = newLease(holderId, ctx.now(), ctx.me, generation);
    if (await publish(ctx, lease)) return lease;
  }
  throw new StoreError('another process took the lease at the same time', 'lease_held', joinPath(ctx.runDir, LEASE));
}

/** Throws lease_lost unless holderId still holds the lease, in the generation it took. */
export async function checkHolder(ctx: LeaseContext, holderId: string, generation: number): Promise<LeaseInfo> {
  const read = await readLeaseFile(ctx);
  if (read.kind !== 'held' || read.lease.holderId !== holderId || read.lease.generation !== generation) {
    const by =
      read.kind === 'held' && read.lease.fenced === true ? 'taken over (from another window or process)' : 'taken over by another writer';
    throw new StoreError(`the lease of this run was ${by}; this writer stopped writing`, 'lease_lost', joinPath(ctx.runDir, LEASE));
  }
  return read.lease;
}

export async function renewLease(ctx: LeaseContext, holderId: string, generation: number): Promise<LeaseInfo> {
  const lease = await checkHolder(ctx, holderId, generation);
  const renewed = { ...lease, renewedAt: ctx.now() };
  await replaceFileAtomic(ctx.fs, ctx.runDir, LEASE, JSON.stringify(renewed));
  return renewed;
}

export async function releaseLease(ctx: LeaseContext, holderId: string): Promise<void> {
  const read = await readLeaseFile(ctx);
  if (read.kind !== 'held' || read.lease.holderId !== holderId) return;
  await ctx.fs.unlink(joinPath(ctx.runDir, LEASE)).catch((error: unknown) => {
    if (!isNotFound(error)) throw error;
  });
}

/**
 * A take-over: the lease becomes a fenced one of the next generation, so its holder's next check
 * (append or renewal) fails and the lease is free for the next acquireLease. Nothing to do when
 * no one holds the run.
 */
export async function fenceLease(ctx: LeaseContext): Promise<void> {
  const read = await readLeaseFile(ctx);
  if (read.kind === 'none') return;
  const generation = read.kind === 'held' ? read.lease.generation + 1 : 0;
  const fence: LeaseInfo = { ...newLease(`fence-${newHolderId()}`, ctx.now(), ctx.me, generation), fenced: true };
  await replaceFileAtomic(ctx.fs, ctx.runDir, LEASE, JSON.stringify(fence));
}
