import { readIfExists, replaceFileAtomic } from './atomic-file';
import { BranchNeedsRecords, foldFromResumeState, foldRecord, type FoldState } from './fold';
import { isNotFound, joinPath, type StoreFs } from './fs-port';
import { readLine, scanJournalInSlices, type JournalScan, type ReadOptions } from './journal-format';
import { decodeSnapshot, encodeSnapshot, resumeStateOf, SNAPSHOT_NAME, snapshotName, type Snapshot } from './resume-state';

// State snapshots of one run's folder. Written atomically (temp, fsync, rename, fsync the folder)
// after a commit group is durable; the newest KEEP stay. A resume takes the newest one that holds
// and that the journal still matches (the line it names ends where it says, with its checksum and
// seq), then reads only the journal after it. Anything else falls back to an older one, then to
// reading the whole journal: a snapshot can make a resume fast, never make it wrong.

const KEEP = 2;

/** Where the journal stood right after the group a snapshot covers. */
export interface JournalPosition {
  readonly journalBytes: number;
  readonly lastLineStart: number;
  readonly lastLineCrc: string;
}

/** The snapshot file names of a run folder, newest first. */
export async function snapshotNames(fs: StoreFs, runDir: string): Promise<string[]> {
  try {
    return (await fs.readdir(runDir)).filter((name) => SNAPSHOT_NAME.test(name)).sort((a, b) => b.localeCompare(a));
  } catch (error) {
    if (isNotFound(error)) return [];
    throw error;
  }
}

export async function readSnapshot(fs: StoreFs, runDir: string, name: string): Promise<Snapshot | null> {
  const bytes = await readIfExists(fs, joinPath(runDir, name));
  return bytes === null ? null : decodeSnapshot(bytes);
}

/** Writes the fold's resume state as a snapshot of `position`, then removes all but the newest KEEP. */
export async function writeSnapshot(fs: StoreFs, runDir: string, fold: FoldState, position: JournalPosition): Promise<number> {
  const bytes = encodeSnapshot({ ...position, state: resumeStateOf(fold) });
  await replaceFileAtomic(fs, runDir, snapshotName(fold.lastSeq), bytes);
  for (const old of (await snapshotNames(fs, runDir)).slice(KEEP)) await fs.unlink(joinPath(runDir, old)).catch(() => undefined);
  return bytes.length;
}

/** The journal's bytes from `offset` on. */
async function readFrom(fs: StoreFs, path: string, offset: number): Promise<Uint8Array> {
  if (fs.readFrom) return fs.readFrom(path, offset);
  return (await fs.readFile(path)).subarray(offset);
}

/** True when `bytes` (read from the snapshot's lastLineStart) begin with the line the snapshot names, intact. */
function matchesJournal(snapshot: Snapshot, bytes: Uint8Array): boolean {
  const length = snapshot.journalBytes - snapshot.lastLineStart;
  if (length <= 0 || bytes.length < length || bytes[length - 1] !== 0x0a) return false;
  const line = readLine(bytes, 0, length - 1);
  return line !== null && line.c === snapshot.lastLineCrc && line.s === snapshot.state.lastSeq && line.s === line.e;
}

export interface ResumedFold {
  readonly fold: FoldState;
  /** The journal after the snapshot (offsets are the file's). */
  readonly tail: JournalScan;
  readonly snapshot: JournalPosition & { readonly name: string };
}

/**
 * The newest snapshot that holds, with the journal after it read and folded in; null when none
 * holds, or the journal after it needs the whole journal (a damaged tail is not null: it is
 * returned in `tail.damage`, for the caller to refuse).
 */
export async function resumeFromSnapshot(
  fs: StoreFs,
  runDir: string,
  runId: string,
  read: ReadOptions,
  pause?: () => Promise<void>,
): Promise<ResumedFold | null> {
  for (const name of await snapshotNames(fs, runDir)) {
    const snapshot = await readSnapshot(fs, runDir, name).catch(() => null);
    if (!snapshot || snapshot.state.run.runId !== runId) continue;
    const bytes = await readFrom(fs, read.file, snapshot.lastLineStart);
    if (!matchesJournal(snapshot, bytes)) continue;
    const from = snapshot.journalBytes - snapshot.lastLineStart;
    const tail = await scanJournalInSlices(
      bytes.subarray(from),
      { ...read, base: snapshot.journalBytes, firstSeq: snapshot.state.lastSeq + 1 },
      pause,
    );
    const fold = foldFromResumeState(snapshot.state);
    try {
      for (const record of tail.records) foldRecord(fold, record);
    } catch (error) {
      if (error instanceof BranchNeedsRecords) return null;
      throw error;
    }
    const { journalBytes, lastLineStart, lastLineCrc } = snapshot;
    return { fold, tail, snapshot: { name, journalBytes, lastLineStart, lastLineCrc } };
  }
  return null;
}
