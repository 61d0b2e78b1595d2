import { systemClock, type Clock } from '../../src/core/ports';
import { parseJsonAs } from '../../src/core/store/atomic-file';
import { StoreError } from '../../src/core/store/contract';
import {
  DAMAGE_DOC,
  ListingRow,
  type DeviceWatch,
  type BlobEntry,
  type DeviceGroup,
  type DeviceRun,
  type JournalDevice,
  type LeaseRead,
  type NewListingRow,
} from '../../src/core/store/device';
import type { LeaseInfo } from '../../src/core/store/lease-policy';
import { FORMAT_VERSION } from '../../src/core/store/records';
import { RUN_ID } from '../../src/core/store/run-id';

// The journal device in memory, for the tests: the proof that a device is a small file. Device
// objects that share one MemoryVolume are like processes on one store: each is told the others'
// appends and lease changes, never its own. Bytes are copied in and out: no caller aliases them.

interface MemoryRun {
  /** The journal's bytes are the first `length` of `journal` (which grows by doubling). */
  journal: Uint8Array;
  length: number;
  lease: LeaseInfo | null;
  /** The generation of the last lease let go (readLease's `none` carries it). */
  lastGeneration?: number;
  listing: Uint8Array;
  readonly docs: Map<string, Uint8Array>;
}

type Kind = 'appends' | 'leases';
type Watcher = { readonly kind: Kind; readonly owner: MemoryJournalDevice; readonly listener: (runId: string) => void };

/** The state device objects share: runs, blobs and the watches to tell. */
export class MemoryVolume {
  readonly runs = new Map<string, MemoryRun>();
  readonly blobs = new Map<string, { readonly bytes: Uint8Array; readonly putAt: number }>();
  readonly watchers = new Set<Watcher>();

  /** Tells the watches of `kind` of every other device object, on a microtask. */
  tell(kind: Kind, from: MemoryJournalDevice, runId: string): void {
    for (const w of this.watchers) if (w.kind === kind && w.owner !== from) queueMicrotask(() => this.watchers.has(w) && w.listener(runId));
  }
}

const copy = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);
const sameLease = (a: LeaseInfo, b: LeaseInfo): boolean =>
  a.holderId === b.holderId && a.generation === b.generation && (a.fenced === true) === (b.fenced === true);

export class MemoryJournalDevice implements JournalDevice {
  constructor(
    readonly volume = new MemoryVolume(),
    private readonly clock: Clock = systemClock,
  ) {}

  journalName(runId: string): string {
    if (!RUN_ID.test(runId)) throw new StoreError(`not a valid run id: ${JSON.stringify(runId)}`, 'invalid');
    return `memory journal of run ${runId}`;
  }

  private find(runId: string): MemoryRun | undefined {
    this.journalName(runId);
    return this.volume.runs.get(runId);
  }

  private run(runId: string): MemoryRun {
    const run = this.find(runId);
    if (!run) throw new StoreError(`run ${runId} not found`, 'not_found', this.journalName(runId));
    return run;
  }

  async createRun(runId: string, bytes: Uint8Array, listing: NewListingRow, lease: LeaseInfo | null): Promise<void> {
    if (this.find(runId)) throw new StoreError(`run ${runId} already exists`, 'invalid', this.journalName(runId));
    const run = { journal: copy(bytes), length: bytes.length, lease: lease && { ...lease }, listing: rowBytes(listing), docs: new Map() };
    this.volume.runs.set(runId, run);
    this.volume.tell('appends', this, runId);
    if (lease) this.volume.tell('leases', this, runId);
  }

  async journalSize(runId: string): Promise<number | null> {
    return this.find(runId)?.length ?? null;
  }

  async readJournal(runId: string, from = 0, end?: number): Promise<Uint8Array> {
    const run = this.run(runId);
    const stop = Math.min(end ?? run.length, run.length);
    return copy(run.journal.subarray(Math.min(from, stop), stop));
  }

  async appendGroup(runId: string, group: DeviceGroup, lease: LeaseInfo, listing?: NewListingRow): Promise<LeaseInfo> {
    const run = this.run(runId);
    const lost = (why: string) => new StoreError(`${why}; this writer stopped writing`, 'lease_lost', this.journalName(runId));
    if (run.lease?.fenced === true) throw lost('the lease of this run was taken over (fenced)');
    if (run.lease?.holderId !== lease.holderId || run.lease.generation !== lease.generation)
      throw lost('the lease of this run was taken over by another writer');
    if (run.length !== group.at) throw lost(`the journal changed under this writer (${run.length} bytes, expected ${group.at})`);
    const need = run.length + group.bytes.length;
    if (need > run.journal.length) run.journal = Buffer.concat([run.journal.subarray(0, run.length)], Math.max(need, 2 * run.length));
    run.journal.set(group.bytes, run.length);
    run.length = need;
    if (listing) run.listing = rowBytes(listing);
    this.volume.tell('appends', this, runId);
    return { ...run.lease };
  }

  async truncateJournal(runId: string, length: number): Promise<void> {
    const run = this.run(runId);
    run.length = Math.min(run.length, Math.max(0, length));
    this.volume.tell('appends', this, runId);
  }

  async closeJournal(): Promise<void> {}

  async readLease(runId: string): Promise<LeaseRead> {
    const run = this.find(runId);
    return run ? leaseOf(run) : { kind: 'none' };
  }

  /** A memory lease is never unreadable: an `unreadable` read is as read while no lease is held. */
  async swapLease(runId: string, expected: LeaseRead, next: LeaseInfo | null): Promise<boolean> {
    const run = this.run(runId);
    const asRead =
      expected.kind === 'held'
        ? run.lease !== null && sameLease(run.lease, expected.lease)
        : run.lease === null &&
          (expected.kind !== 'none' || expected.generation === undefined || expected.generation === run.lastGeneration);
    if (!asRead) return false;
    if (!next && run.lease) run.lastGeneration = run.lease.generation;
    const renewal = expected.kind === 'held' && next?.holderId === expected.lease.holderId && next.generation === expected.lease.generation;
    run.lease = next && { ...next };
    if (!renewal) this.volume.tell('leases', this, runId);
    return true;
  }

  async putDoc(runId: string, name: string, bytes: Uint8Array): Promise<void> {
    this.run(runId).docs.set(name, copy(bytes));
  }

  async appendDoc(runId: string, name: string, bytes: Uint8Array): Promise<void> {
    const docs = this.run(runId).docs;
    docs.set(name, new Uint8Array(Buffer.concat([docs.get(name) ?? new Uint8Array(), bytes])));
  }

  async getDoc(runId: string, name: string): Promise<Uint8Array | null> {
    const doc = this.find(runId)?.docs.get(name);
    return doc ? copy(doc) : null;
  }

  async listDocs(runId: string, prefix: string): Promise<string[]> {
    return [...(this.find(runId)?.docs.keys() ?? [])].filter((name) => name.startsWith(prefix));
  }

  async removeDoc(runId: string, name: string): Promise<void> {
    this.find(runId)?.docs.delete(name);
  }

  async writeListing(runId: string, row: NewListingRow): Promise<void> {
    this.run(runId).listing = rowBytes(row);
  }

  /** Parsed on read as a stored row is: null when it does not parse or is of a newer format. */
  async readListing(runId: string): Promise<ListingRow | null> {
    const run = this.find(runId);
    return run ? listingOf(run) : null;
  }

  async listRuns(): Promise<DeviceRun[]> {
    return [...this.volume.runs]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([runId, run]) => {
        const damage = run.docs.get(DAMAGE_DOC);
        return { runId, journalBytes: run.length, listing: listingOf(run), lease: leaseOf(run), damage: damage ? copy(damage) : null };
      });
  }

  async runBytes(runId: string): Promise<number> {
    const run = this.run(runId);
    return [...run.docs.values()].reduce((sum, doc) => sum + doc.length, run.length + run.listing.length);
  }

  async removeRun(runId: string): Promise<void> {
    this.volume.runs.delete(runId);
  }

  async putBlob(hash: string, bytes: Uint8Array): Promise<void> {
    if (!this.volume.blobs.has(hash)) this.volume.blobs.set(hash, { bytes: copy(bytes), putAt: this.clock.now() });
  }

  async getBlob(hash: string): Promise<Uint8Array | null> {
    const blob = this.volume.blobs.get(hash);
    return blob ? copy(blob.bytes) : null;
  }

  async missingBlobs(hashes: readonly string[]): Promise<string[]> {
    return hashes.filter((hash) => !this.volume.blobs.has(hash));
  }

  async listBlobs(): Promise<BlobEntry[]> {
    return [...this.volume.blobs].map(([hash, blob]) => ({ hash, size: blob.bytes.length, putAt: blob.putAt }));
  }

  async removeBlob(hash: string): Promise<void> {
    this.volume.blobs.delete(hash);
  }

  watch(kind: Kind, listener: (runId: string) => void): DeviceWatch {
    const watcher: Watcher = { kind, owner: this, listener };
    this.volume.watchers.add(watcher);
    return { close: () => void this.volume.watchers.delete(watcher) };
  }
}

function leaseOf(run: MemoryRun): LeaseRead {
  if (run.lease) return { kind: 'held', lease: { ...run.lease } };
  return run.lastGeneration !== undefined ? { kind: 'none', generation: run.lastGeneration } : { kind: 'none' };
}

function listingOf(run: MemoryRun): ListingRow | null {
  const row = parseJsonAs(run.listing, ListingRow);
  return row && row.v <= FORMAT_VERSION ? row : null;
}

const rowBytes = (row: NewListingRow): Uint8Array => Buffer.from(JSON.stringify({ v: FORMAT_VERSION, ...row }));
