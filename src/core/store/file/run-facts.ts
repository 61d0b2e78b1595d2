import { z } from 'zod';
import { parseJsonAs, readIfExists, replaceFileUnsynced } from '../atomic-file';
import { foldInSlices } from '../fold';
import { joinPath } from '../fs-port';
import { lastLineOf } from '../journal-format';
import { factsOfRun, foldFacts, type RunFacts } from '../listing-facts';
import { FORMAT_VERSION, type StoredRecord } from '../records';
import { BLOB_HASH } from '../refs';
import { journalAfter, type JournalPoint } from './file-snapshots';
import type { FileCheckpointStore } from './file-store';

// facts.json: a cache of the ids the fold's listing facts stand on (the pending patches, the
// blobs and runs the records name), as of a point of the journal. Only their readers read it:
// a writer opening the run, a decision that moves a patch, garbage collection. Each folds the
// journal after that point in (the journal stays the truth); a cache that no longer matches the
// journal is rebuilt from the whole journal. Written without fsyncs: a crash leaves an older one.

export const FACTS = 'facts.json';

const count = z.number().int().nonnegative();
const RunFactsFile = z.object({
  v: z.number().int().positive(),
  runId: z.string(),
  journalBytes: count,
  lastLineStart: count,
  lastLineCrc: z.string().regex(/^[0-9a-f]{8}$/),
  lastSeq: count,
  pending: z.array(z.string()),
  blobs: z.array(z.string().regex(BLOB_HASH)),
  runs: z.array(z.string()),
});

/** Writes the run's facts as of `point` of its journal (unsynced: a cache). */
export async function writeFactsFile(store: FileCheckpointStore, runId: string, facts: RunFacts, point: JournalPoint): Promise<void> {
  const { journalBytes, lastLineStart, lastLineCrc, lastSeq } = point;
  const file = { v: FORMAT_VERSION, runId, journalBytes, lastLineStart, lastLineCrc, lastSeq };
  const json = JSON.stringify({ ...file, pending: [...facts.pending], blobs: [...facts.blobs], runs: [...facts.runs] });
  await replaceFileUnsynced(store.fs, store.runDir(runId), FACTS, new TextEncoder().encode(json));
}

/** A part of the journal its caller holds already: the records from byte `from` to byte `end` (the journal's end). */
export interface JournalPart {
  readonly from: number;
  readonly end: number;
  readonly records: readonly StoredRecord[];
}

/**
 * The run's facts at its journal's end, from facts.json and the journal after the point it names
 * (taken from `known` when that holds it, read otherwise); null when there is none that holds
 * (missing, another run's, a journal that no longer matches it, damage after it).
 */
export async function readRunFacts(store: FileCheckpointStore, runId: string, known?: JournalPart): Promise<RunFacts | null> {
  const bytes = await readIfExists(store.fs, joinPath(store.runDir(runId), FACTS)).catch(() => null);
  const file = bytes && parseJsonAs(bytes, RunFactsFile);
  if (!file || file.runId !== runId || file.v > FORMAT_VERSION) return null;
  const facts: RunFacts = { pending: new Set(file.pending), blobs: new Set(file.blobs), runs: new Set(file.runs) };
  // It is written only once the records it covers are durable, and a journal only grows: a point
  // inside what the caller holds, or at the journal's very end, is one the journal holds.
  const first = known?.records[0]?.seq ?? file.lastSeq + 1;
  if (known && file.journalBytes >= known.from && file.journalBytes <= known.end && file.lastSeq >= first - 1) {
    foldFacts(
      facts,
      known.records.filter((r) => r.seq > file.lastSeq),
    );
    return facts;
  }
  if ((await store.fs.stat(store.journalPath(runId)))?.size === file.journalBytes) return facts;
  const read = { file: store.journalPath(runId), migrations: store.migrations, readVersion: store.readVersion };
  const scan = await journalAfter(store.fs, read, file);
  if (!scan || scan.damage) return null;
  foldFacts(facts, scan.records);
  return facts;
}

/** The run's facts from its whole journal (and its parents', for a fork), written to facts.json for the next reader. */
export async function rebuildRunFacts(store: FileCheckpointStore, runId: string, pause?: () => Promise<void>): Promise<RunFacts> {
  const scan = await store.checkedScan(runId, await store.scanJournalOf(runId));
  const facts = factsOfRun(await foldInSlices(scan.records, undefined, pause), scan.records);
  const point = await pointAt(store, runId, scan.goodLength, scan.records.at(-1)!.seq);
  await writeFactsFile(store, runId, facts, point).catch(() => undefined);
  return facts;
}

/** The run's facts at its journal's end: from facts.json when it holds, else from the whole journal. */
export async function runFacts(
  store: FileCheckpointStore,
  runId: string,
  known: JournalPart,
  pause?: () => Promise<void>,
): Promise<RunFacts> {
  return (await readRunFacts(store, runId, known)) ?? rebuildRunFacts(store, runId, pause);
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
