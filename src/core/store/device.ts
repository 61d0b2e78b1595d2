import { z } from 'zod';
import type { LeaseInfo } from './lease-policy';
import { RunStatus } from './records';

// The journal device port: the few primitives the store (store.ts and the modules beside it) is
// written once over. Per run, a journal of bytes (checksummed lines, journal-format.ts) only ever
// appended or cut back, a lease compared and set by generation, small named documents and a
// listing row; and the store's content-addressed blobs. Devices: files, PostgreSQL, memory (tests).
//
// Errors: a device throws StoreError for what the store must tell apart (not_found, lease_lost,
// invalid for a run that exists already); any other failure of its I/O as it comes (the store
// names it). Offsets are byte offsets of the run's own journal (a fork's journal begins at 0 with
// its fork record, whatever seq that record has).

/** A run's listing row: enough to list it, to resume it cheaply and to plan GC, without reading its journal. The journal stays the truth. */
export const ListingRow = z.object({
  v: z.number().int().positive(),
  runId: z.string(),
  task: z.string(),
  createdAt: z.number(),
  status: RunStatus,
  lastSeq: z.number().int().nonnegative(),
  updatedAt: z.number(),
  steps: z.number().int().nonnegative(),
  journalBytes: z.number().int().nonnegative(),
  /** A fork: the run and step it was forked from. */
  parent: z.object({ runId: z.string(), step: z.number().int().positive() }).optional(),
  /** The last torn tail a writer cut when it opened the run. */
  tornTailCut: z.object({ offset: z.number(), bytes: z.number(), at: z.number() }).optional(),
  /** How many patches are pending (absent: not known without reading the run). A store of an older version wrote the ids here. */
  pendingPatches: z.union([z.number().int().nonnegative(), z.array(z.string()).transform((ids) => ids.length)]).optional(),
  undoableRestore: z.boolean().optional(),
  /** The first new instruction since the run began or was forked (listedInstruction): a fork is titled by it. */
  instruction: z.string().optional(),
  /** The workspace the run works on, as workers match it (workspaceKey): a device that hands runs to workers indexes it. */
  workspace: z.string().optional(),
});
export type ListingRow = z.infer<typeof ListingRow>;
/** A listing row as the store writes it (the device adds the format version). */
export type NewListingRow = Omit<ListingRow, 'v'>;

/** What a device holds of a run's lease. `none` may carry the generation of the last lease (a device that keeps it). */
export type LeaseRead =
  | { readonly kind: 'none'; readonly generation?: number }
  | { readonly kind: 'held'; readonly lease: LeaseInfo }
  /** A file device's lease file being written (or torn): its holder is unknown; `since` is when it was last written. */
  | { readonly kind: 'unreadable'; readonly since: number };

/** The document of a run that notes its damage (a DamageNote's JSON): listRuns gives its bytes, and a run that has one is never claimed. */
export const DAMAGE_DOC = 'damage.json';

/** A watch of change notices: `whenListening`, where the device starts a watch asynchronously, settles once nothing after it can be missed. */
export interface DeviceWatch {
  close(): void;
  whenListening?(): Promise<void>;
}

/** One run as the device lists it: its journal's size, listing row (null: none that parses), lease and damage note (its bytes). */
export interface DeviceRun {
  readonly runId: string;
  readonly journalBytes: number;
  readonly listing: ListingRow | null;
  readonly lease: LeaseRead;
  readonly damage: Uint8Array | null;
}

/** One commit group to append: its bytes (whole lines), the journal's end it goes after, and its first record's seq (lines are consecutive). */
export interface DeviceGroup {
  readonly bytes: Uint8Array;
  readonly at: number;
  readonly firstSeq: number;
}

export interface BlobEntry {
  readonly hash: string;
  readonly size: number;
  /** When it was put (ms): a young blob a writer may be about to name survives GC. */
  readonly putAt: number;
}

export interface JournalDevice {
  /** How errors and damage reports name the run's journal (a file's path; "postgres journal of run X"). Throws invalid for a bad id. */
  journalName(runId: string): string;
  /** Asked between slices of a long read: lets the event loop run. */
  readonly pause?: () => Promise<void>;

  // ── journals ──
  /**
   * Creates the run: its journal holding `bytes` (its first group), its listing row, and `lease`
   * (null: created free, as a fork is). Durable when it resolves. invalid when the run exists (nothing changed).
   */
  createRun(runId: string, bytes: Uint8Array, listing: NewListingRow, lease: LeaseInfo | null): Promise<void>;
  /** The journal's size in bytes; null when there is no such run. */
  journalSize(runId: string): Promise<number | null>;
  /** The journal's bytes from `from` (default 0) to `end` (default its end), exactly: offsets may fall inside a line. not_found when there is no such run. */
  readJournal(runId: string, from?: number, end?: number): Promise<Uint8Array>;
  /**
   * Appends one group durably, only while `lease` (holder and generation, not fenced) still holds
   * the run and the journal ends at `group.at`: else lease_lost and nothing appended. `listing`,
   * when given, is written with it (in the same commit where the device can; else after, as a
   * cache). Gives the lease as it stands after.
   */
  appendGroup(runId: string, group: DeviceGroup, lease: LeaseInfo, listing?: NewListingRow): Promise<LeaseInfo>;
  /** Cuts the journal back to `length` bytes, durably (a torn tail; a group that failed half written). */
  truncateJournal(runId: string, length: number): Promise<void>;
  /** The run's writer stopped: what the device held open for it is let go. Never throws. */
  closeJournal(runId: string): Promise<void>;

  // ── leases (the store's lease rules decide; the device compares and sets) ──
  readLease(runId: string): Promise<LeaseRead>;
  /**
   * Sets the run's lease to `next` (null: none) if it is still as `expected` was read (none; the
   * same holder, generation and fence; or, for `unreadable`, no readable lease of another holder).
   * False, nothing changed, when it is not. A change other than a renewal (same holder and
   * generation) is told to other devices' lease watches.
   */
  swapLease(runId: string, expected: LeaseRead, next: LeaseInfo | null): Promise<boolean>;

  // ── per-run documents: snapshots, facts logs, the damage note ──
  /** Replaces (or creates) a document; `durable`: synced before it resolves (else a cache a crash may lose or leave older). */
  putDoc(runId: string, name: string, bytes: Uint8Array, durable: boolean): Promise<void>;
  /** Appends to a document (created when missing), unsynced: a torn last line is its reader's to drop. */
  appendDoc(runId: string, name: string, bytes: Uint8Array): Promise<void>;
  /** A document's bytes; null when it does not exist. */
  getDoc(runId: string, name: string): Promise<Uint8Array | null>;
  /** The names of the run's documents that begin with `prefix`. */
  listDocs(runId: string, prefix: string): Promise<string[]>;
  removeDoc(runId: string, name: string): Promise<void>;

  // ── listing rows and runs ──
  /** Replaces the run's listing row; `durable` as putDoc. */
  writeListing(runId: string, row: NewListingRow, durable: boolean): Promise<void>;
  /** The run's listing row; null when there is none that parses (or of a newer format). */
  readListing(runId: string): Promise<ListingRow | null>;
  /** Every run that has a journal, in run id order. */
  listRuns(): Promise<DeviceRun[]>;
  /** The bytes the run takes (journal, documents, listing). */
  runBytes(runId: string): Promise<number>;
  /** Removes the run whole, its journal first (a half-removed run is never listed). The caller holds its lease. */
  removeRun(runId: string): Promise<void>;

  // ── blobs, content-addressed by sha256 ──
  /** Stores `bytes` under `hash` (the caller hashed them), durably; nothing when it is there. */
  putBlob(hash: string, bytes: Uint8Array): Promise<void>;
  /** A blob's bytes as stored (the store checks the hash); null when missing. */
  getBlob(hash: string): Promise<Uint8Array | null>;
  missingBlobs(hashes: readonly string[]): Promise<string[]>;
  listBlobs(): Promise<BlobEntry[]>;
  removeBlob(hash: string): Promise<void>;

  // ── change notices ──
  /**
   * Tells `listener` the run id of every append (`appends`) or lease change (`leases`) made by
   * another device object (another process, another store), until closed; may tell one more than
   * once, and for leases also a heartbeat. Undefined when the device cannot watch.
   */
  watch(kind: 'appends' | 'leases', listener: (runId: string) => void): DeviceWatch | undefined;

  /**
   * Optional (a device shared by workers): takes the lease of one run of `workspace` that is
   * running or interrupted, not damaged, not in `skip`, whose lease `take` turns into a new one
   * (null: not free); claims of several workers never take the same run.
   */
  claimRun?(
    workspace: string,
    skip: readonly string[],
    take: (current: LeaseRead) => LeaseInfo | null,
  ): Promise<{ runId: string; lease: LeaseInfo } | null>;
  /** Ends what the device holds open (connections, watches). */
  dispose?(): Promise<void>;
}
