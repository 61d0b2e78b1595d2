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
  for (const record of records) addRefs(facts, record);
  return facts;
}

/**
 * Moves `facts` (in place) over `records` appended after them: a patch comes in pending, a
 * patch_state moves it out (accepted, rolled back) or back in; every blob and run named is added.
 * True when anything changed.
 */
export function foldFacts(facts: RunFacts, records: Iterable<StoredRecord>): boolean {
  const moved = foldPending(facts.pending, records);
  let named = false;
  for (const record of records) named = addRefs(facts, record) || named;
  return moved || named;
}

/** What a record moves of the pending ids: its patch id, and whether that patch is pending after it. */
function pendingMove(record: StoredRecord): [string, boolean] | undefined {
  if (record.type === 'patch') return [record.patch.patchId, record.patch.state === 'pending'];
  if (record.type === 'patch_state') return [record.patchId, record.state === 'pending'];
  return undefined;
}

/** Moves the pending patch ids (in place) over `records` appended after them; true when they changed. */
export function foldPending(pending: PendingIds, records: Iterable<StoredRecord>): boolean {
  let changed = false;
  for (const record of records) {
    const [id, isPending] = pendingMove(record) ?? [];
    if (id === undefined) continue;
    const had = pending.has(id);
    if (isPending) pending.add(id);
    else pending.delete(id);
    changed ||= had !== pending.has(id);
  }
  return changed;
}

/** What records moved of a run's facts since they were last written: each moved patch id (pending after, or not), the references named. */
export interface FactsMoves {
  readonly pending: Map<string, boolean>;
  readonly blobs: Set<string>;
  readonly runs: Set<string>;
}

export const emptyMoves = (): FactsMoves => ({ pending: new Map(), blobs: new Set(), runs: new Set() });

/** Adds what `records` move to `moves` (in place; a patch's latest move wins) and returns them. */
export function noteMoves(moves: FactsMoves, records: Iterable<StoredRecord>): FactsMoves {
  for (const record of records) {
    const [id, isPending] = pendingMove(record) ?? [];
    if (id !== undefined) moves.pending.set(id, isPending!);
  }
  foldRefs(moves, records);
  return moves;
}

/** Adds the blobs and runs `records` name to `facts` (in place). */
export function foldRefs(facts: Pick<RunFacts, 'blobs' | 'runs'>, records: Iterable<StoredRecord>): void {
  for (const record of records) addRefs(facts, record);
}

function addRefs(facts: Pick<RunFacts, 'blobs' | 'runs'>, record: StoredRecord): boolean {
  const before = facts.blobs.size + facts.runs.size;
  for (const hash of blobRefs(record)) facts.blobs.add(hash);
  for (const runId of runRefs(record)) facts.runs.add(runId);
  return facts.blobs.size + facts.runs.size !== before;
}
