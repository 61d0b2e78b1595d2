import type { FoldState } from './fold';
import { PendingIds } from './pending-ids';
import type { RestoreRecord, StoredRecord } from './records';
import { blobRefs, runRefs } from './refs';

// The facts of a run's fold that its listing and garbage collection need, kept so that nothing
// reads a journal to know them: what waits for review, whether a restore can be undone, the blobs
// and the runs its records name.

/** How long an instruction the listing carries may be: enough to title a run by, small enough for every listing. */
const LISTED_INSTRUCTION_MAX = 200;

/** An instruction as a run's listing carries it (a fork is titled by its first): on one line, cut to LISTED_INSTRUCTION_MAX. */
export function listedInstruction(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > LISTED_INSTRUCTION_MAX ? `${line.slice(0, LISTED_INSTRUCTION_MAX - 1)}…` : line;
}

/** The newest restore of a run that no later undo has undone, or undefined. */
export function lastUndoableRestore(state: { readonly restores: readonly RestoreRecord[] }): RestoreRecord | undefined {
  const undone = new Set(state.restores.flatMap((r) => (r.undoes !== undefined ? [r.undoes] : [])));
  return [...state.restores].reverse().find((r) => !undone.has(r.restoreId) && r.kind !== 'undo');
}

/** A run's ids the listing counts and GC keeps: its pending patches, the blobs and the runs its records (a fork's parents' too) name. */
export interface RunFacts {
  readonly pending: PendingIds;
  readonly blobs: Set<string>;
  readonly runs: Set<string>;
}

/** The facts of a whole run: `records` all of them (a fork's parents' first), `fold` their fold. */
export function factsOfRun(fold: Pick<FoldState, 'patches'>, records: Iterable<StoredRecord>): RunFacts {
  const pending = [...fold.patches.values()].filter((patch) => patch.state === 'pending').map((patch) => patch.patchId);
  const facts: RunFacts = { pending: new PendingIds(pending), blobs: new Set(), runs: new Set() };
  foldRefs(facts, records);
  return facts;
}

/** What a record moves of the pending ids: its patch id, and whether that patch is pending after it. */
function pendingMove(record: StoredRecord): [string, boolean] | undefined {
  if (record.type === 'patch') return [record.patch.patchId, record.patch.state === 'pending'];
  if (record.type === 'patch_state') return [record.patchId, record.state === 'pending'];
  return undefined;
}

/**
 * Moves the pending patch ids (in place) over `records` appended after them. `moved` learns each
 * id's move since it was empty (a move back cancels the first), as a line of pending.json states
 * it: only ids that were not pending and are, or the reverse.
 */
export function foldPending(pending: PendingIds, records: Iterable<StoredRecord>, moved?: Map<string, boolean>): void {
  for (const record of records) {
    const [id, isPending] = pendingMove(record) ?? [];
    if (id === undefined || pending.has(id) === isPending) continue;
    pending.move(id, isPending!);
    if (moved?.has(id)) moved.delete(id);
    else moved?.set(id, isPending!);
  }
}

/** What records moved of a run's facts since they were last written: each moved patch id (pending after, or not), the references named. */
export interface FactsMoves {
  readonly pending: Map<string, boolean>;
  readonly blobs: Set<string>;
  readonly runs: Set<string>;
}

export const emptyMoves = (): FactsMoves => ({ pending: new Map(), blobs: new Set(), runs: new Set() });

/** Adds the blobs and runs `records` name to `facts` (in place). */
export function foldRefs(facts: Pick<RunFacts, 'blobs' | 'runs'>, records: Iterable<StoredRecord>): void {
  for (const record of records) {
    for (const hash of blobRefs(record)) facts.blobs.add(hash);
    for (const runId of runRefs(record)) facts.runs.add(runId);
  }
}
