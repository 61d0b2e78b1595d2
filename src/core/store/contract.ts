import type { MessageParam } from '../model/messages';
import type { Decisions } from '../patches/review';
import type { CheckpointRecord, ForkPoint, NewRecord, RunRecord, StoredRecord } from './records';
import type { LeaseInfo } from './lease-policy';
import type { ListingRow } from './device';
import type { DamageNote } from './listing-row';
import type { RetentionPolicy } from './retention';
import type { ResumeState } from './resume-state';

export type { LeaseInfo } from './lease-policy';

/** A person's decision on the agent's changes: hunks kept or undone, a patch accepted or rolled back. */
export type DecisionRecord =
  Extract<NewRecord, { type: 'review' }> | (Extract<NewRecord, { type: 'patch_state' }> & { state: 'accepted' | 'rolled_back' });

/**
 * A run's state folded from its whole journal (at its latest checkpoint or an earlier one): the
 * fields of ResumeState, but every ledger entry of the active history and every patch of the run
 * (patches survive a session branch), with the checkpoints.
 */
export type RunState = Omit<ResumeState, 'patchCount'> & {
  /** Checkpoints of the active history, oldest first. */
  readonly checkpoints: readonly CheckpointRecord[];
  /** Every checkpoint ever written, including those of abandoned branches (checkpointCount of them). */
  readonly allCheckpoints: readonly CheckpointRecord[];
  /** From a full read: by checkpointId, the history its messageCount counts in (before a compaction, the earlier one). */
  readonly historyOf?: ReadonlyMap<string, readonly MessageParam[]>;
  /** Set only when read with `intactPart`: the journal is damaged here, and this state is its intact part, read-only. */
  readonly damage?: JournalDamage;
  /** The review decisions of the run's hunks (patchId -> hunk -> latest decision). */
  readonly decisions?: Decisions;
};

/** A complete journal line that does not hold: the run cannot be written until a person repairs it. */
export type JournalDamage = Readonly<Omit<DamageNote, 'at'>>;

/** A torn write that opening a run for writing cut from the journal's end: where it began and how many bytes it held. */
export interface TornTailCut {
  readonly file: string;
  readonly offset: number;
  readonly bytes: number;
}

/** A run as the store lists it: the facts of its listing row (those absent are not known without reading the run), and its lease. */
export type RunSummary = Readonly<
  Pick<
    ListingRow,
    'runId' | 'task' | 'createdAt' | 'status' | 'updatedAt' | 'steps' | 'parent' | 'instruction' | 'pendingPatches' | 'undoableRestore'
  >
> & {
  readonly damaged?: string;
  /** True when a live writer holds the lease right now. */
  readonly leased: boolean;
  /** Who holds it, when leased (and the lease file is readable). */
  readonly holder?: LeaseInfo;
  /** True when that holder is this very process (a writer of this window), false for another one. */
  readonly heldHere?: boolean;
};

/** A fork to start: its id, the parent's step it starts at (or a checkpoint inside that step), and what was done to the files. */
export interface ForkRequest {
  readonly runId: string;
  readonly step: number;
  readonly checkpointId?: string;
  readonly files: ForkPoint['files'];
}

export interface VerifyReport {
  readonly runId: string;
  readonly ok: boolean;
  readonly records: number;
  /** A torn tail that was (or would be) cut: byte offset and length. */
  readonly tornTail?: { offset: number; bytes: number };
  readonly damage?: JournalDamage;
  readonly missingBlobs: readonly string[];
}

export class StoreError extends Error {
  constructor(
    message: string,
    readonly code: 'damaged' | 'future_version' | 'not_found' | 'lease_lost' | 'lease_held' | 'io' | 'invalid',
    readonly file?: string,
    readonly offset?: number,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

/** Exclusive writer of one run. Every append is one commit group: one fsync. */
export interface RunWriter {
  readonly runId: string;
  readonly holderId: string;
  /** Set when opening the run cut a torn write from the journal's end: the host reports it to the person. */
  readonly tornTailCut?: TornTailCut;
  /** What the next step of the run needed when this writer opened it (readResumeState at that moment). */
  readonly resumeState: ResumeState;
  /** Appends records durably; resolves only once they are on disk. Throws StoreError('lease_lost') when the lease was taken over. */
  append(records: readonly NewRecord[]): Promise<readonly StoredRecord[]>;
  renewLease(): Promise<void>;
  /** Releases the lease; further appends fail. */
  close(): Promise<void>;
}

export interface ReadRunOptions {
  readonly atCheckpoint?: string;
  readonly intactPart?: boolean;
}

export interface CheckpointStore {
  /** Creates the run folder, writes the run record and holds the lease. */
  createRun(run: Omit<RunRecord, 'v' | 'at' | 'type'>): Promise<RunWriter>;
  /** Acquires the lease of an existing run (a holder that is gone is taken over; a live one is lease_held). */
  openWriter(runId: string): Promise<RunWriter>;
  /**
   * A person's take-over of a run whose holder is alive but stalled: fences the lease (a new
   * generation), so the holder's next append or renewal is refused and it stops writing; the
   * next openWriter takes the run. Optional: stores without it offer no take-over.
   */
  fenceLease?(runId: string): Promise<void>;
  /**
   * The run's state. A damaged journal throws StoreError('damaged') naming the file and byte,
   * unless `intactPart`: then the state of every complete commit group before the damage, with
   * `damage` set, for showing read-only.
   */
  readRun(runId: string, options?: ReadRunOptions): Promise<RunState>;
  /**
   * What the next step of the run needs (resume-state.ts), read from the newest state snapshot
   * and the journal after it: the cost follows the live context, not the run's length. Damage in
   * what it reads throws StoreError('damaged'), as readRun does.
   */
  readResumeState(runId: string): Promise<ResumeState>;
  /** A run's records, a fork's beginning with the parent's records it stands on. */
  readRecords(runId: string): Promise<readonly StoredRecord[]>;
  /**
   * Starts a fork of `parentId`: a new run (paused) whose history is the parent's up to the start
   * of `fork.step`. It writes only the fork's first record, pointing at the parent's journal as it
   * is now (ForkPoint) and its blobs: O(1) in the parent's length. Throws not_found / invalid.
   */
  forkRun(parentId: string, fork: ForkRequest): Promise<RunSummary>;
  listRuns(): Promise<readonly RunSummary[]>;
  putBlob(bytes: Uint8Array): Promise<string>;
  getBlob(hash: string): Promise<Uint8Array>;
  verify(runId: string): Promise<VerifyReport>;
  /**
   * Appends a person's decisions as one commit group to a run no writer holds: the light path of
   * Keep, Undo and Accept, reading no journal where the store can. Throws lease_held while another
   * writer holds the run. Optional: without it (as where the store cannot), a writer appends them.
   */
  appendDecisions?(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]>;
  /** Deletes old completed runs beyond the quota and unreferenced blobs. */
  collectGarbage(policy: RetentionPolicy): Promise<GcResult>;
  /**
   * The store's change notice: `listener` gets the run id of every append by another holder
   * (another process, another store object), until closed; never this store object's own
   * appends, never a lease heartbeat. May tell one append more than once. Optional: a store
   * without it (or one that cannot watch where it is) tells nothing.
   */
  watchAppends?(listener: (runId: string) => void): { close(): void };
  /**
   * The store's lease notice: `listener` gets the run id whenever who holds a run may have
   * changed (a lease taken, released or fenced by another holder), until closed. May also tell a
   * heartbeat, this object's own change, or one change more than once: the caller compares the
   * listing. Optional, as watchAppends.
   */
  watchLeases?(listener: (runId: string) => void): { close(): void };
}

export interface GcResult {
  removedRuns: string[];
  removedBlobs: number;
  freedBytes: number;
}
