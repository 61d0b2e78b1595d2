import { z } from 'zod';
import { parseJsonAs } from './atomic-file';
import { checksummed, lastLineOf, readChecked } from './journal-format';
import { foldInSlices } from './history';
import { emptyMoves, factsOfRun, foldPending, foldRefs, type FactsMoves, type RunFacts } from './listing-facts';
import { FORMAT_VERSION, LineCrc, type StoredRecord } from './records';
import { BLOB_HASH } from './refs';
import { PendingIds } from './pending-ids';
import { journalAfter, type JournalPoint } from './snapshots';
import type { JournalStore } from './store';

// pending.json and refs.json: caches of the ids the fold's facts stand on, each as of a point of
// the journal: the pending patches (the listing counts them; a writer opening the run and a
// decision that moves a patch read them), the blobs and runs the records name (only garbage
// collection reads them). A reader folds the journal after the point in (the journal stays the
// truth); one that no longer matches the journal is rebuilt from it whole. Unsynced: a crash
// leaves an older one. Each is a log of checksummed lines (`checksummed`, as the journal's): a
// first line with the whole set, then lines of what moved since the line before (ids added,
// pending ids gone), each appended by the writer of the line before: a step writes what it moved,
// not the run's length. The writer starts the log again with one whole line when it first writes
// it and once the appended lines outgrow the first. A torn last line is left out (the journal
// after the line before is folded in); a complete line that does not hold makes the file not
// hold. A file of an older version (one JSON object, no checksum) reads as a first line.

/** The two caches, by the facts they hold. */
export type FactsPart = 'pending' | 'refs';
const FACTS_FILES: Readonly<Record<FactsPart, string>> = { pending: 'pending.json', refs: 'refs.json' };
const PARTS: readonly FactsPart[] = ['pending', 'refs'];
const NEWLINE = 0x0a;

const count = z.number().int().nonnegative();
/** Checked by hand: zod element by element costs more than the read itself for 10,000 ids. */
const ids = (test?: RegExp) =>
  z.custom<string[]>((v) => Array.isArray(v) && v.every((id) => typeof id === 'string' && (!test || test.test(id)))).optional();
const FactsFile = z.object({
  v: z.number().int().positive(),
  runId: z.string(),
  journalBytes: count,
  lastLineStart: count,
  lastLineCrc: LineCrc,
  lastSeq: count,
  /** The pending patch ids, one a line: one string parses and writes far faster than 10,000. */
  pending: z.string().optional(),
  /** How many ids `pending` holds (so that a reader need not count 10,000 lines); counted when absent. */
  pendingCount: count.optional(),
  blobs: ids(BLOB_HASH),
  runs: ids(),
  /** A line after the first: `pending` the ids that became pending, `gone` those no longer, `blobs` and `runs` those named anew. */
  moved: z.literal(true).optional(),
  /** Its `pending` ids were not pending at the line before and its `gone` ids were (foldPending): applied without a lookup. */
  exact: z.literal(true).optional(),
  gone: z.string().optional(),
});
type FactsFile = z.infer<typeof FactsFile>;

/** The lines of a facts file; null when it does not hold (see the top of this file). */
function factsLines(bytes: Uint8Array): FactsFile[] | null {
  const lines: FactsFile[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(NEWLINE); nl !== -1; start = nl + 1, nl = bytes.indexOf(NEWLINE, start)) {
    const parsed = FactsFile.safeParse(readChecked(bytes, start, nl));
    if (!parsed.success || (lines.length === 0) === (parsed.data.moved === true)) return start === 0 ? olderFile(bytes) : null;
    lines.push(parsed.data);
  }
  return lines.length > 0 ? lines : olderFile(bytes);
}

/** A facts file of an older version: one JSON object without a checksum. */
function olderFile(bytes: Uint8Array): FactsFile[] | null {
  const file = parseJsonAs(bytes, FactsFile);
  return file && file.moved === undefined ? [file] : null;
}

/** A facts file's line at `point` of the journal: its JSON closed by a checksum, as a journal line is. */
function lineOf(runId: string, { journalBytes, lastLineStart, lastLineCrc, lastSeq }: JournalPoint, body: object): Uint8Array {
  const line = { v: FORMAT_VERSION, runId, journalBytes, lastLineStart, lastLineCrc, lastSeq, ...body };
  return new TextEncoder().encode(checksummed(JSON.stringify(line).slice(0, -1)));
}

/** Writes the run's facts as of `point` of its journal (unsynced: a cache), the `parts` asked for, each as a new log of one line; the bytes of each. */
export async function writeFactsFile(
  store: JournalStore,
  runId: string,
  facts: RunFacts,
  point: JournalPoint,
  parts: readonly FactsPart[] = PARTS,
): Promise<Partial<Record<FactsPart, number>>> {
  const written: Partial<Record<FactsPart, number>> = {};
  // An id with a line break (the record schema allows one) cannot be written one a line: no cache then, it is rebuilt.
  const pending = parts.includes('pending') ? facts.pending.lines() : null;
  for (const part of parts.filter((p) => p !== 'pending' || pending !== null)) {
    const body = part === 'pending' ? { pending, pendingCount: facts.pending.size } : { blobs: [...facts.blobs], runs: [...facts.runs] };
    const bytes = lineOf(runId, point, body);
    await store.device.putDoc(runId, FACTS_FILES[part], bytes, false);
    written[part] = bytes.length;
  }
  return written;
}

/**
 * Appends to the run's `part` log what moved since its last line (which this writer wrote, at the
 * point `moves` start from) as of `point`; the bytes appended, or null when the moves cannot be
 * written so (an id with a line break: the caller writes the whole set instead).
 */
export async function appendFactsMoves(
  store: JournalStore,
  runId: string,
  part: FactsPart,
  moves: FactsMoves,
  point: JournalPoint,
): Promise<number | null> {
  const body = part === 'pending' ? pendingMoves(moves.pending) : { blobs: [...moves.blobs], runs: [...moves.runs] };
  if (!body) return null;
  const bytes = lineOf(runId, point, { moved: true, ...(part === 'pending' ? { exact: true } : {}), ...body });
  await store.device.appendDoc(runId, FACTS_FILES[part], bytes);
  return bytes.length;
}

/** Pending moves as a line holds them: ids one a line; null when one cannot be written so. */
function pendingMoves(moves: ReadonlyMap<string, boolean>): { pending: string; gone: string } | null {
  const ids = [...moves.keys()];
  if (ids.some((id) => id === '' || id.includes('\n'))) return null;
  return { pending: ids.filter((id) => moves.get(id)).join('\n'), gone: ids.filter((id) => !moves.get(id)).join('\n') };
}

/** Applies one moved line to the facts (in place): an exact line's ids without a lookup each (10,000 lookups in pending.json's text cost a resume ~10 ms). */
function applyMoved(facts: RunFacts, line: FactsFile): void {
  const move = (ids: string | undefined, pending: boolean) => {
    for (const id of ids ? ids.split('\n') : []) if (line.exact || facts.pending.has(id) !== pending) facts.pending.move(id, pending);
  };
  move(line.gone, false);
  move(line.pending, true);
  line.blobs?.forEach((hash) => facts.blobs.add(hash));
  line.runs?.forEach((id) => facts.runs.add(id));
}

/** A facts log read: the facts as of its last line, and that line's point. */
export interface FactsLog {
  readonly facts: RunFacts;
  readonly file: FactsFile;
}

/** Reads a facts log; null when it does not hold. */
export async function readFactsLog(store: JournalStore, runId: string, part: FactsPart): Promise<FactsLog | null> {
  const bytes = await store.device.getDoc(runId, FACTS_FILES[part]).catch(() => null);
  const lines = bytes && factsLines(bytes);
  const [first] = lines ?? [];
  if (!lines || !first || lines.some((line) => line.runId !== runId || line.v > FORMAT_VERSION)) return null;
  const pending = part === 'pending' ? new PendingIds([], first.pending, first.pendingCount) : new PendingIds();
  const facts: RunFacts = { pending, blobs: new Set(first.blobs), runs: new Set(first.runs) };
  for (const line of lines.slice(1)) applyMoved(facts, line);
  return { facts, file: lines.at(-1)! };
}

/** A part of the journal its caller holds already: the records from byte `from` to byte `end` (the journal's end). */
export interface JournalPart {
  readonly from: number;
  readonly end: number;
  readonly records: readonly StoredRecord[];
}

/**
 * The run's facts at its journal's end (those of `parts`; the others left empty): each log's, and
 * the journal's after its point (from `known` when that holds it); null when one does not hold
 * (missing, another run's, a journal that no longer matches it, damage after it).
 */
export async function readRunFacts(
  store: JournalStore,
  runId: string,
  known?: JournalPart,
  parts: readonly FactsPart[] = PARTS,
): Promise<RunFacts | null> {
  let pending = new PendingIds();
  let refs: Pick<RunFacts, 'blobs' | 'runs'> = { blobs: new Set(), runs: new Set() };
  for (const part of parts) {
    const log = await readFactsLog(store, runId, part);
    const after = log && (await journalAfterFile(store, runId, log.file, known));
    if (!log || !after) return null;
    // Each part folds only its own facts (a resume asks for pending alone: no blob walk of the
    // tail), and the pending ids stay pending.json's text until they are needed one by one.
    if (part === 'pending') foldPending((pending = log.facts.pending), after);
    else foldRefs((refs = log.facts), after);
  }
  return { pending, blobs: refs.blobs, runs: refs.runs };
}

/**
 * The light path's pending count after the decision records `known` (right after pending.json's
 * point), from pending.json alone; null when the cache is not at `known.from` (the caller then
 * reads the facts the general way). The ids stay text (PendingIds), never split into 10,000 strings.
 */
export function pendingAfter(log: FactsLog | null, known: JournalPart): { count: number; moves: FactsMoves } | null {
  const first = known.records[0]?.seq;
  if (!log || log.file.journalBytes !== known.from || first === undefined || log.file.lastSeq !== first - 1) return null;
  if (known.records.some((record) => record.type !== 'patch_state' && record.type !== 'review')) return null;
  const moves = emptyMoves();
  foldPending(log.facts.pending, known.records, moves.pending);
  return { count: log.facts.pending.size, moves };
}

/** The records after a cache file's point, or null when the journal does not hold that point. */
async function journalAfterFile(
  store: JournalStore,
  runId: string,
  file: FactsFile,
  known?: JournalPart,
): Promise<readonly StoredRecord[] | null> {
  // A cache is written only once the records it covers are durable, and a journal only grows: a
  // point inside what the caller holds, or at the journal's very end, is one the journal holds.
  const first = known?.records[0]?.seq ?? file.lastSeq + 1;
  if (known && file.journalBytes >= known.from && file.journalBytes <= known.end && file.lastSeq >= first - 1)
    return known.records.filter((r) => r.seq > file.lastSeq);
  if ((await store.device.journalSize(runId)) === file.journalBytes) return [];
  const scan = await journalAfter(store.journal(runId), file);
  return scan && !scan.damage ? scan.records : null;
}

/** The run's facts from its whole journal (and its parents', for a fork), written to its facts logs for the next reader. */
export async function rebuildRunFacts(store: JournalStore, runId: string): Promise<RunFacts> {
  const scan = await store.checkedScan(runId, await store.scanJournalOf(runId));
  const facts = factsOfRun(await foldInSlices(scan.records, undefined, store.pause), scan.records);
  const point = await pointAt(store, runId, scan.goodLength, scan.records.at(-1)!.seq);
  await writeFactsFile(store, runId, facts, point).catch(() => undefined);
  return facts;
}

/** The point of the run's journal that ends at `journalBytes` with record `lastSeq`: its last line read back. */
export async function pointAt(store: JournalStore, runId: string, journalBytes: number, lastSeq: number): Promise<JournalPoint> {
  for (let window = 4 << 10; ; window *= 4) {
    const from = Math.max(0, journalBytes - window);
    const bytes = await store.device.readJournal(runId, from, journalBytes);
    const { start, crc } = lastLineOf(bytes);
    if (start > 0 || from === 0) return { journalBytes, lastLineStart: from + start, lastLineCrc: crc, lastSeq };
  }
}

/** refs.json (only garbage collection reads it) is rewritten with a snapshot at a compaction or after this much journal; pending.json (a resume reads it) with each. */
const REFS_STEP_BYTES = 4 << 20;
/** A facts log is started again (one whole line) once the lines appended pass its first line's bytes, or this many when that is smaller. */
const FACTS_LOG_MIN_BYTES = 16 << 10;

/** A writer's log of one part: the offset it last wrote it at (-1: not yet), what moved since, its first line's and appended bytes. */
type LogState = { at: number; moves: FactsMoves; first: number; appended: number };
const newLog = (): LogState => ({ at: -1, moves: emptyMoves(), first: 0, appended: 0 });

/** A writer's facts: kept as it appends, and its logs brought to the journal's end with its snapshots and at its close. */
export class FactsWriter {
  private readonly logs: Record<FactsPart, LogState> = { pending: newLog(), refs: newLog() };

  constructor(
    private readonly store: JournalStore,
    private readonly runId: string,
    /** The run's facts at the journal's end (its blob and run references only those appended, until refsKnown). */
    readonly facts: RunFacts,
    /** False when the run was opened without reading refs.json: read (and merged) before refs.json is first written. */
    private refsKnown: boolean,
  ) {}

  /** Folds appended records in. */
  add(records: readonly StoredRecord[]): void {
    foldPending(this.facts.pending, records, this.logs.pending.moves.pending);
    foldRefs(this.facts, records);
    foldRefs(this.logs.refs.moves, records);
  }

  /** With a snapshot at `point`: pending.json, and refs.json at a compaction or after REFS_STEP_BYTES (`all`: both, as at close). */
  async write(point: JournalPoint, all: boolean): Promise<void> {
    const refs = all || point.journalBytes - this.logs.refs.at >= REFS_STEP_BYTES;
    let stale = (refs ? PARTS : (['pending'] as const)).filter((part) => this.logs[part].at !== point.journalBytes);
    // An older refs.json stays when this writer cannot learn the run's references: its readers fold the journal after it.
    if (stale.includes('refs') && !(await this.knowRefs())) stale = stale.filter((part) => part !== 'refs');
    for (const part of stale) {
      const log = this.logs[part];
      const written = await this.writePart(log, part, point).catch(() => false);
      log.at = written ? point.journalBytes : -1;
      if (written) log.moves = emptyMoves();
    }
  }

  /**
   * One facts log brought to `point`: what moved since appended to the line this writer wrote last;
   * else, and once the appended lines outgrow the first, the whole set as a new log. False when not written.
   */
  private async writePart(log: LogState, part: FactsPart, point: JournalPoint): Promise<boolean> {
    if (log.at !== -1 && log.appended <= Math.max(log.first, FACTS_LOG_MIN_BYTES)) {
      const bytes = await appendFactsMoves(this.store, this.runId, part, log.moves, point);
      if (bytes !== null) log.appended += bytes;
      if (bytes !== null) return true;
    }
    const first = (await writeFactsFile(this.store, this.runId, this.facts, point, [part]))[part];
    log.first = first ?? 0;
    log.appended = 0;
    return first !== undefined;
  }

  /** True once the facts hold the run's blob and run references (read from refs.json and the journal after it, else the whole journal). */
  private async knowRefs(): Promise<boolean> {
    if (this.refsKnown) return true;
    const read = await readRunFacts(this.store, this.runId, undefined, ['refs']).catch(() => null);
    const refs = read ?? (await rebuildRunFacts(this.store, this.runId).catch(() => null));
    if (!refs) return false;
    refs.blobs.forEach((hash) => this.facts.blobs.add(hash));
    refs.runs.forEach((id) => this.facts.runs.add(id));
    return (this.refsKnown = true);
  }
}
