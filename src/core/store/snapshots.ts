import type { JournalDevice } from './device';
import type { OpenedRun } from './store';
import { foldFromResumeState, foldTail, type FoldState } from './fold';
import {
  lineRefs,
  readChecked,
  readLine,
  recordAtLine,
  scanJournal,
  type JournalScan,
  type LineRef,
  type ReadOptions,
} from './journal-format';
import type { StoredRecord } from './records';
import { decodeSnapshot, encodeSnapshot, resumeStateOf, type Snapshot } from './resume-state';

// State snapshots of one run, documents snapshot-<seq>.json. Written durably after a commit group is durable; the newest KEEP stay. A snapshot names
// the live context's messages by their lines in the journal (a message's line, checksum and seq)
// rather than copying them, so it stays small however long the context. A resume takes the newest
// one that holds and that the journal still matches (the line it names as its end ends where it
// says, with its checksum and seq, and every message line it names is that message record, whole),
// then reads only the journal after it. Anything else falls back to an older one, then to the
// whole journal: a snapshot can make a resume fast, never wrong.

const KEEP = 2;
/** Of the older snapshots of a run, the newest of each span of this many records is kept too: a fork opens from its parent's newest one before its step. */
const FORK_SPAN = 2048;
const SNAPSHOT_NAME = /^snapshot-\d{12}\.json$/;

/** The seq of the last record a snapshot covers, from its file name. */
export const snapshotSeq = (name: string): number => Number(name.slice('snapshot-'.length, -'.json'.length));

/** The snapshot names of a run, newest first. */
export async function snapshotNames(device: JournalDevice, runId: string): Promise<string[]> {
  // Names of one width compare as plain strings (localeCompare's first call sets up ICU's collator: 12 ms).
  return (await device.listDocs(runId, 'snapshot-'))
    .filter((name) => SNAPSHOT_NAME.test(name))
    .sort()
    .reverse();
}

/** Snapshot `name` of run `runId`; null when it cannot be read, does not hold or is another run's (a folder copied). */
export async function readSnapshot(device: JournalDevice, runId: string, name: string): Promise<Snapshot | null> {
  const bytes = await device.getDoc(runId, name).catch(() => null);
  const snapshot = bytes && (await decodeSnapshot(bytes, device.pause).catch(() => null));
  return snapshot?.state.run.runId === runId ? snapshot : null;
}

/** The step a snapshot file states and the journal bytes it covers, read without its schema (to pick one among many); null when it does not hold. */
export async function snapshotHead(
  device: JournalDevice,
  runId: string,
  name: string,
): Promise<{ stepId: number; journalBytes: number } | null> {
  const bytes = await device.getDoc(runId, name).catch(() => null);
  if (!bytes || bytes[bytes.length - 1] !== 0x0a) return null;
  const raw = readChecked(bytes, 0, bytes.length - 1) as { journalBytes?: unknown; state?: { stepId?: unknown } } | null;
  const { journalBytes } = raw ?? {};
  const stepId = raw?.state?.stepId;
  return typeof stepId === 'number' && typeof journalBytes === 'number' ? { stepId, journalBytes } : null;
}

/** The journal lines of the messages and ledger entries a writer knows (the run's own records), by item. */
export type RecordLines = WeakMap<object, LineRef>;

/** Remembers the lines of the messages and ledger entries of `records`, one a line in `bytes` (complete lines, from file offset `base` on). */
export function rememberLines(lines: RecordLines, bytes: Uint8Array, base: number, records: readonly StoredRecord[]): void {
  lineRefs(bytes, base, records, (record) => record.type === 'message' || record.type === 'ledger').forEach((line, i) => {
    const record = records[i]!;
    if (line && record.type === 'message') lines.set(record.message, line);
    if (line && record.type === 'ledger') lines.set(record.entry, line);
  });
}

/**
 * Writes the fold's resume state as a snapshot of the journal up to `position` (each message and
 * ledger entry `lines` knows named by its line), then removes all but the newest KEEP. Its size in
 * bytes when it copies items (those `lines` does not know: a fork's ancestors'), else 0.
 */
export async function writeSnapshot(
  device: JournalDevice,
  fold: FoldState,
  position: Omit<Snapshot, 'v' | 'state'>,
  lines?: RecordLines,
  span = FORK_SPAN,
): Promise<number> {
  const name = `snapshot-${String(fold.lastSeq).padStart(12, '0')}.json`;
  const state = resumeStateOf(fold);
  const byLine = <T extends object>(item: T) => {
    const line = lines?.get(item);
    return line ? { line } : item;
  };
  const named = { ...state, messages: state.messages.map(byLine), ledger: state.ledger.map(byLine) };
  const bytes = encodeSnapshot({ ...position, state: named });
  const runId = fold.run.runId;
  await device.putDoc(runId, name, bytes, true);
  // All but the newest KEEP go, and the newest of each older span of `span` records stays.
  const names = await snapshotNames(device, runId);
  const spanOf = (name: string) => Math.floor(snapshotSeq(name) / span);
  const spans = new Set(names.slice(0, KEEP).map(spanOf));
  const prunable = names.slice(KEEP).filter((name) => spans.has(spanOf(name)) || !spans.add(spanOf(name)));
  for (const old of prunable) await device.removeDoc(runId, old).catch(() => undefined);
  return [...named.messages, ...named.ledger].every((item) => 'line' in item) ? 0 : bytes.length;
}

/** A point of a journal: the end of the line of record `lastSeq`, which starts at `lastLineStart` and states `lastLineCrc`. */
export interface JournalPoint {
  readonly journalBytes: number;
  readonly lastLineStart: number;
  readonly lastLineCrc: string;
  readonly lastSeq: number;
}

/** True when `bytes` (read from the point's lastLineStart) begin with the line the point names, intact. */
function matchesJournal(point: JournalPoint, bytes: Uint8Array): boolean {
  const length = point.journalBytes - point.lastLineStart;
  if (length <= 0 || bytes.length < length || bytes[length - 1] !== 0x0a) return false;
  const line = readLine(bytes, 0, length - 1);
  return line !== null && line.c === point.lastLineCrc && line.s === point.lastSeq && line.s === line.e;
}

/** Where a run's journal is read: the device, the run, and how its lines are read. */
export interface JournalAt {
  readonly device: JournalDevice;
  readonly runId: string;
  readonly read: ReadOptions;
}

/** The journal after `point`, scanned from `bytes` (the journal from byte `from` on); null when they no longer hold the line the point names. */
function scanAfter(at: JournalAt, bytes: Uint8Array, from: number, point: JournalPoint): Promise<JournalScan> | null {
  if (point.lastLineStart < from || !matchesJournal(point, bytes.subarray(point.lastLineStart - from))) return null;
  const read = { ...at.read, base: point.journalBytes, firstSeq: point.lastSeq + 1 };
  return scanJournal(bytes.subarray(point.journalBytes - from), read, at.device.pause);
}

/**
 * The journal after `point`, scanned (offsets those of the journal); null when the journal cannot
 * be read or no longer holds the line the point names. Damage after it is in `damage`.
 */
export async function journalAfter(at: JournalAt, point: JournalPoint): Promise<JournalScan | null> {
  const bytes = await at.device.readJournal(at.runId, point.lastLineStart).catch(() => null);
  return bytes && scanAfter(at, bytes, point.lastLineStart, point);
}

/** A snapshot's list, the items it names by line read from `bytes` (the journal from byte `from` on) into `lines`; null when one does not hold. */
async function itemsOf<T extends object>(
  items: ReadonlyArray<T | { line: LineRef }>,
  pick: (record: StoredRecord | null) => T | undefined,
  at: { bytes: Uint8Array; from: number; read: ReadOptions; lines: RecordLines; pause?: () => Promise<void> },
): Promise<T[] | null> {
  const out: T[] = [];
  for (const item of items) {
    if (!('line' in item)) {
      out.push(item);
      continue;
    }
    await at.pause?.();
    const found = pick(recordAtLine(at.bytes, at.from, item.line, at.read));
    if (!found) return null;
    at.lines.set(found, item.line);
    out.push(found);
  }
  return out;
}

/** A snapshot's state (its items read back) and the journal after it, up to byte `end` when given. */
export interface SnapshotRun {
  readonly fold: FoldState;
  readonly scan: JournalScan;
  /** The journal bytes read, from offset `from` on. */
  readonly bytes: Uint8Array;
  readonly from: number;
  readonly lines: RecordLines;
}

/** The state of one snapshot and the journal after it (to byte `end`, else to its end), not folded in; null when it does not hold. */
export async function readSnapshotRun(journal: JournalAt, snapshot: Snapshot, end?: number): Promise<SnapshotRun | null> {
  const { state } = snapshot;
  const point = { ...snapshot, lastSeq: state.lastSeq };
  const named = [...state.messages, ...state.ledger];
  const from = named.reduce((min, item) => ('line' in item ? Math.min(min, item.line.start) : min), point.lastLineStart);
  // A journal that cannot be read is left to the whole read, which says why.
  const bytes = await journal.device.readJournal(journal.runId, from, end).catch(() => null);
  const scan = bytes && (await scanAfter(journal, bytes, from, point));
  if (!scan) return null;
  const at = { bytes, from, read: journal.read, lines: new WeakMap(), pause: journal.device.pause };
  const messages = await itemsOf(state.messages, (r) => (r?.type === 'message' ? r.message : undefined), at);
  const ledger = messages && (await itemsOf(state.ledger, (r) => (r?.type === 'ledger' ? r.entry : undefined), at));
  if (!ledger) return null;
  // The tail's are known by line too, for the writer's next snapshot.
  rememberLines(at.lines, bytes.subarray(snapshot.journalBytes - from), snapshot.journalBytes, scan.records);
  return { fold: foldFromResumeState({ ...state, messages, ledger }), scan, bytes, from, lines: at.lines };
}

/**
 * The newest snapshot that holds, with the journal after it read and folded in; null when none
 * holds, or the journal after it needs the whole journal (a damaged tail is not null: it is
 * returned in `scan.damage`, for the caller to refuse).
 */
export async function resumeFromSnapshot(journal: JournalAt): Promise<OpenedRun | null> {
  const { device, runId } = journal;
  for (const name of await snapshotNames(device, runId)) {
    const snapshot = await readSnapshot(device, runId, name);
    const opened = snapshot && (await readSnapshotRun(journal, snapshot));
    if (opened && (await foldTail(opened.fold, opened.scan.records, device.pause)))
      return { fold: opened.fold, scan: opened.scan, snapshotAt: snapshot.journalBytes, lines: opened.lines };
  }
  return null;
}
