import { readIfExists, replaceFileAtomic } from '../atomic-file';
import type { OpenedRun } from './file-store';
import { BranchNeedsRecords, foldFromResumeState, foldRecord, type FoldState } from '../fold';
import { joinPath, readdirOrEmpty, type StoreFs } from '../fs-port';
import { readLine, scanJournal, type JournalScan, type ReadOptions } from '../journal-format';
import { SLICE } from '../slices';
import { decodeSnapshot, encodeSnapshot, resumeStateOf, type Snapshot } from '../resume-state';

// State snapshots of one run's folder, snapshot-<seq>.json. Written atomically (temp, fsync,
// rename, fsync the folder) after a commit group is durable; the newest KEEP stay. A resume takes
// the newest one that holds and that the journal still matches (the line it names ends where it
// says, with its checksum and seq), then reads only the journal after it. Anything else falls
// back to an older one, then to the whole journal: a snapshot can make a resume fast, never wrong.

const KEEP = 2;
const SNAPSHOT_NAME = /^snapshot-\d{12}\.json$/;

/** The snapshot file names of a run folder, newest first. */
export async function snapshotNames(fs: StoreFs, runDir: string): Promise<string[]> {
  // Names of one width compare as plain strings (localeCompare's first call sets up ICU's collator: 12 ms).
  return (await readdirOrEmpty(fs, runDir))
    .filter((name) => SNAPSHOT_NAME.test(name))
    .sort()
    .reverse();
}

export async function readSnapshot(fs: StoreFs, runDir: string, name: string, pause?: () => Promise<void>): Promise<Snapshot | null> {
  const bytes = await readIfExists(fs, joinPath(runDir, name));
  return bytes === null ? null : decodeSnapshot(bytes, pause);
}

/** Writes the fold's resume state as a snapshot of the journal up to `position`, then removes all but the newest KEEP. */
export async function writeSnapshot(fs: StoreFs, runDir: string, fold: FoldState, position: Omit<Snapshot, 'v' | 'state'>): Promise<void> {
  const name = `snapshot-${String(fold.lastSeq).padStart(12, '0')}.json`;
  await replaceFileAtomic(fs, runDir, name, encodeSnapshot({ ...position, state: resumeStateOf(fold) }));
  for (const old of (await snapshotNames(fs, runDir)).slice(KEEP)) await fs.unlink(joinPath(runDir, old)).catch(() => undefined);
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

/**
 * The journal after `point`, scanned (offsets those of the file); null when the journal cannot be
 * read or no longer holds the line the point names. Damage after it is in `damage`.
 */
export async function journalAfter(
  fs: StoreFs,
  read: ReadOptions,
  point: JournalPoint,
  pause?: () => Promise<void>,
): Promise<JournalScan | null> {
  const { journalBytes, lastLineStart } = point;
  const from = fs.readFrom ? fs.readFrom(read.file, lastLineStart) : fs.readFile(read.file).then((all) => all.subarray(lastLineStart));
  const bytes = await from.catch(() => null);
  if (!bytes || !matchesJournal(point, bytes)) return null;
  return scanJournal(bytes.subarray(journalBytes - lastLineStart), { ...read, base: journalBytes, firstSeq: point.lastSeq + 1 }, pause);
}

/**
 * The newest snapshot that holds, with the journal after it read and folded in; null when none
 * holds, or the journal after it needs the whole journal (a damaged tail is not null: it is
 * returned in `scan.damage`, for the caller to refuse).
 */
export async function resumeFromSnapshot(
  fs: StoreFs,
  runDir: string,
  runId: string,
  read: ReadOptions,
  pause?: () => Promise<void>,
): Promise<OpenedRun | null> {
  for (const name of await snapshotNames(fs, runDir)) {
    const snapshot = await readSnapshot(fs, runDir, name, pause).catch(() => null);
    if (!snapshot || snapshot.state.run.runId !== runId) continue;
    const { state } = snapshot;
    // A journal that cannot be read is left to the whole read, which says why.
    const scan = await journalAfter(fs, read, { ...snapshot, lastSeq: state.lastSeq }, pause);
    if (!scan) continue;
    const fold = foldFromResumeState(state);
    try {
      for (const [i, record] of scan.records.entries()) {
        foldRecord(fold, record);
        if (i % SLICE === SLICE - 1) await pause?.();
      }
    } catch (error) {
      if (error instanceof BranchNeedsRecords) return null;
      throw error;
    }
    return { fold, scan, snapshotAt: snapshot.journalBytes };
  }
  return null;
}
