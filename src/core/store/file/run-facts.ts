import { z } from 'zod';
import { parseJsonAs, readIfExists, replaceFileUnsynced } from '../atomic-file';
import { foldInSlices } from '../fold';
import { joinPath } from '../fs-port';
import { lastLineOf } from '../journal-format';
import { factsOfRun, foldPending, foldRefs, type RunFacts } from '../listing-facts';
import { FORMAT_VERSION, type StoredRecord } from '../records';
import { BLOB_HASH } from '../refs';
import { PendingIds } from '../pending-ids';
import { journalAfter, type JournalPoint } from './file-snapshots';
import type { FileCheckpointStore } from './file-store';

// pending.json and refs.json: caches of the ids the fold's facts stand on, each as of a point of
// the journal: the pending patches (the listing counts them), the blobs and runs the records
// name (garbage collection keeps them). Only their readers read them: a writer opening the run,
// a decision that moves a patch (pending.json only), garbage collection (refs.json only). Each
// folds the journal after its point in (the journal stays the truth); one that no longer matches
// the journal is rebuilt from the whole journal. Written without fsyncs: a crash leaves an older one.

/** The two caches, by the facts they hold. */
export type FactsPart = 'pending' | 'refs';
export const FACTS_FILES: Readonly<Record<FactsPart, string>> = { pending: 'pending.json', refs: 'refs.json' };
const PARTS: readonly FactsPart[] = ['pending', 'refs'];

const count = z.number().int().nonnegative();
/** Checked by hand: zod element by element costs more than the read itself for 10,000 ids. */
const ids = (test?: RegExp) =>
  z.custom<string[]>((v) => Array.isArray(v) && v.every((id) => typeof id === 'string' && (!test || test.test(id)))).optional();
const FactsFile = z.object({
  v: z.number().int().positive(),
  runId: z.string(),
  journalBytes: count,
  lastLineStart: count,
  lastLineCrc: z.string().regex(/^[0-9a-f]{8}$/),
  lastSeq: count,
  /** The pending patch ids, one a line: one string parses and writes far faster than 10,000. */
  pending: z.string().optional(),
  /** How many ids `pending` holds (so that a reader need not count 10,000 lines); counted when absent. */
  pendingCount: count.optional(),
  blobs: ids(BLOB_HASH),
  runs: ids(),
});
type FactsFile = z.infer<typeof FactsFile>;

/** Writes the run's facts as of `point` of its journal (unsynced: a cache), the `parts` asked for. */
export async function writeFactsFile(
  store: FileCheckpointStore,
  runId: string,
  facts: RunFacts,
  point: JournalPoint,
  parts: readonly FactsPart[] = PARTS,
): Promise<void> {
  const { journalBytes, lastLineStart, lastLineCrc, lastSeq } = point;
  const head = { v: FORMAT_VERSION, runId, journalBytes, lastLineStart, lastLineCrc, lastSeq };
  // An id with a line break (the record schema allows one) cannot be written one a line: no cache then, it is rebuilt.
  const pending = parts.includes('pending') ? facts.pending.lines() : null;
  for (const part of parts.filter((p) => p !== 'pending' || pending !== null)) {
    const body = part === 'pending' ? { pending, pendingCount: facts.pending.size } : { blobs: [...facts.blobs], runs: [...facts.runs] };
    await replaceFileUnsynced(
      store.fs,
      store.runDir(runId),
      FACTS_FILES[part],
      new TextEncoder().encode(JSON.stringify({ ...head, ...body })),
    );
  }
}

/** A part of the journal its caller holds already: the records from byte `from` to byte `end` (the journal's end). */
export interface JournalPart {
  readonly from: number;
  readonly end: number;
  readonly records: readonly StoredRecord[];
}

/**
 * The run's facts at its journal's end (those of `parts`; the others are left empty), each from
 * its file and the journal after the point it names (taken from `known` when that holds it, read
 * otherwise); null when one does not hold (missing, another run's, a journal that no longer
 * matches it, damage after it).
 */
export async function readRunFacts(
  store: FileCheckpointStore,
  runId: string,
  known?: JournalPart,
  parts: readonly FactsPart[] = PARTS,
): Promise<RunFacts | null> {
  // Each part fills its own sets (the pending ids stay pending.json's text until they are needed one by one).
  let pending = new PendingIds();
  let refs: Pick<RunFacts, 'blobs' | 'runs'> = { blobs: new Set(), runs: new Set() };
  for (const part of parts) {
    const bytes = await readIfExists(store.fs, joinPath(store.runDir(runId), FACTS_FILES[part])).catch(() => null);
    const file = bytes && parseJsonAs(bytes, FactsFile);
    if (!file || file.runId !== runId || file.v > FORMAT_VERSION) return null;
    const ids = part === 'pending' ? new PendingIds([], file.pending, file.pendingCount) : new PendingIds();
    const one: RunFacts = { pending: ids, blobs: new Set(file.blobs), runs: new Set(file.runs) };
    const after = await journalAfterFile(store, runId, file, known);
    if (!after) return null;
    // Each part folds only its own facts (a resume asks for pending alone: no blob walk of the tail).
    if (part === 'pending') foldPending((pending = one.pending), after);
    else foldRefs((refs = one), after);
  }
  return { pending, blobs: refs.blobs, runs: refs.runs };
}

/**
 * The light path's move of pending.json over the decision records it just appended (`known`,
 * right after the cache's point) to the new `point`: the ids are moved as text, never split into
 * 10,000 strings. The new count; null when the cache is not at `known.from` (the caller then reads
 * the facts the general way).
 */
export async function movePending(
  store: FileCheckpointStore,
  runId: string,
  known: JournalPart,
  point: JournalPoint,
): Promise<number | null> {
  const bytes = await readIfExists(store.fs, joinPath(store.runDir(runId), FACTS_FILES.pending)).catch(() => null);
  const file = bytes && parseJsonAs(bytes, FactsFile);
  const first = known.records[0]?.seq;
  if (!file || file.runId !== runId || file.v > FORMAT_VERSION || file.pending === undefined) return null;
  if (file.journalBytes !== known.from || first === undefined || file.lastSeq !== first - 1) return null;
  // Only decisions come this way; the ids stay text (PendingIds), never split into 10,000 strings.
  if (known.records.some((record) => record.type !== 'patch_state' && record.type !== 'review')) return null;
  const ids = new PendingIds([], file.pending, file.pendingCount);
  foldPending(ids, known.records);
  const pending = ids.lines();
  if (pending === null) return null;
  const head = { v: FORMAT_VERSION, runId, ...point };
  await replaceFileUnsynced(
    store.fs,
    store.runDir(runId),
    FACTS_FILES.pending,
    new TextEncoder().encode(JSON.stringify({ ...head, pending, pendingCount: ids.size })),
  );
  return ids.size;
}

/** The records after a cache file's point, or null when the journal does not hold that point. */
async function journalAfterFile(
  store: FileCheckpointStore,
  runId: string,
  file: FactsFile,
  known?: JournalPart,
): Promise<readonly StoredRecord[] | null> {
  // A cache is written only once the records it covers are durable, and a journal only grows: a
  // point inside what the caller holds, or at the journal's very end, is one the journal holds.
  const first = known?.records[0]?.seq ?? file.lastSeq + 1;
  if (known && file.journalBytes >= known.from && file.journalBytes <= known.end && file.lastSeq >= first - 1)
    return known.records.filter((r) => r.seq > file.lastSeq);
  if ((await store.fs.stat(store.journalPath(runId)))?.size === file.journalBytes) return [];
  const read = { file: store.journalPath(runId), migrations: store.migrations, readVersion: store.readVersion };
  const scan = await journalAfter(store.fs, read, file);
  return scan && !scan.damage ? scan.records : null;
}

/** The run's facts from its whole journal (and its parents', for a fork), written to facts.json for the next reader. */
export async function rebuildRunFacts(store: FileCheckpointStore, runId: string): Promise<RunFacts> {
  const scan = await store.checkedScan(runId, await store.scanJournalOf(runId));
  const facts = factsOfRun(await foldInSlices(scan.records, undefined, store.pause), scan.records);
  const point = await pointAt(store, runId, scan.goodLength, scan.records.at(-1)!.seq);
  await writeFactsFile(store, runId, facts, point).catch(() => undefined);
  return facts;
}

/** The run's facts at its journal's end: from facts.json when it holds, else from the whole journal. */
export async function runFacts(store: FileCheckpointStore, runId: string, known: JournalPart): Promise<RunFacts> {
  return (await readRunFacts(store, runId, known)) ?? rebuildRunFacts(store, runId);
}

/** The point of the run's journal that ends at `journalBytes` with record `lastSeq`: its last line read back. */
export async function pointAt(store: FileCheckpointStore, runId: string, journalBytes: number, lastSeq: number): Promise<JournalPoint> {
  const journal = store.journalPath(runId);
  for (let window = 4 << 10; ; window *= 4) {
    const from = Math.max(0, journalBytes - window);
    const read = store.fs.readFrom ? store.fs.readFrom(journal, from) : store.fs.readFile(journal).then((all) => all.subarray(from));
    const bytes = (await read).subarray(0, journalBytes - from);
    const { start, crc } = lastLineOf(bytes);
    if (start > 0 || from === 0) return { journalBytes, lastLineStart: from + start, lastLineCrc: crc, lastSeq };
  }
}
