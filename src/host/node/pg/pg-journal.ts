import { StoreError, type JournalDamage } from '../../../core/store/contract';
import { foldFromResumeState, foldTail, type FoldState } from '../../../core/store/fold';
import { foldInSlices } from '../../../core/store/history';
import { encodeGroup, scanJournal, type JournalScan } from '../../../core/store/journal-format';
import type { StoredRecord } from '../../../core/store/records';
import { decodeSnapshot, inlineState } from '../../../core/store/resume-state';

// A run's journal rows are the lines a file journal would hold, one row per record, so reading
// them is the file store's scan over their bytes: checksum, sequence, commit group, version and
// schema, one parser. A commit group is one transaction, so a torn group cannot happen here: one
// found is damage, as is any line that does not hold.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The rows of one commit group: each record's checksummed line, without its newline. */
export function linesOf(records: readonly StoredRecord[]): string[] {
  return decoder.decode(encodeGroup(records)).split('\n').slice(0, -1);
}

/** The journal bytes of rows read in seq order. */
export function bytesOf(lines: readonly string[]): Uint8Array {
  return encoder.encode(lines.length === 0 ? '' : `${lines.join('\n')}\n`);
}

/** Where a run lives, as errors name it (never the server's credentials). */
export function journalName(runId: string): string {
  return `postgres journal of run ${runId}`;
}

export function damagedError(damage: JournalDamage): StoreError {
  return new StoreError(`${damage.file} is damaged at byte ${damage.offset}: ${damage.message}`, 'damaged', damage.file, damage.offset);
}

/** Scans journal rows; a torn group (impossible but for tampering) is damage like any line that does not hold. */
export async function scanRows(
  runId: string,
  lines: readonly string[],
  at: { base?: number; firstSeq?: number } = {},
  pause?: () => Promise<void>,
): Promise<JournalScan> {
  const scan = await scanJournal(bytesOf(lines), { file: journalName(runId), ...at }, pause);
  if (scan.tornTail && !scan.damage) {
    return {
      ...scan,
      damage: { offset: scan.tornTail.offset, message: 'a commit group is not closed (rows of a transaction are missing)' },
    };
  }
  return scan;
}

/** A whole journal's scan, checked: damage throws, the first record must be this run's record. */
export function checkedWhole(runId: string, scan: JournalScan): JournalScan {
  const file = journalName(runId);
  if (scan.damage) throw damagedError({ file, ...scan.damage });
  // A fork's own first record is its `fork` record, after the records of the runs it stands on.
  const own = scan.records.find((r) => r.type === 'fork' && r.runId === runId) ?? scan.records[0];
  if (!own || (own.type !== 'run' && own.type !== 'fork') || own.runId !== runId)
    throw new StoreError(`${file} holds no record of run ${runId}`, 'damaged', file, 0);
  return scan;
}

/** A run opened for reading or writing: its fold, its last seq and the journal's bytes. */
export interface PgOpened {
  readonly fold: FoldState;
  readonly lastSeq: number;
  readonly journalBytes: number;
  /** The journal bytes the newest snapshot covers (0: none). */
  readonly snapshotAt: number;
}

export interface SnapshotRow {
  readonly seq: number;
  readonly snapshot: string;
}

/**
 * A snapshot row's state and the records of the rows after it, not folded in; null when the
 * snapshot does not hold. `tail` is the rows from the snapshot's own last record on: its line must
 * still be the one the snapshot names. Damage in the rows after it throws.
 */
export async function snapshotRows(
  runId: string,
  row: SnapshotRow,
  tail: readonly string[],
  pause?: () => Promise<void>,
): Promise<{ fold: FoldState; scan: JournalScan; snapshotAt: number } | null> {
  const snapshot = await decodeSnapshot(encoder.encode(`${row.snapshot}\n`), pause);
  // Its rows hold every message (only a file store names them by journal line).
  const state = snapshot && inlineState(snapshot.state);
  if (!snapshot || !state || state.run.runId !== runId || state.lastSeq !== row.seq) return null;
  const [named, ...after] = tail;
  if (named === undefined || !named.endsWith(`,"c":"${snapshot.lastLineCrc}"}`)) return null;
  const scan = await scanRows(runId, after, { base: snapshot.journalBytes, firstSeq: row.seq + 1 }, pause);
  if (scan.damage) throw damagedError({ file: journalName(runId), ...scan.damage });
  return { fold: foldFromResumeState(state), scan, snapshotAt: snapshot.journalBytes };
}

/**
 * The run from a snapshot row and the rows after it, or null when the snapshot does not hold or
 * the rows after it need the whole journal (a branch to before it).
 */
export async function openFromSnapshot(
  runId: string,
  row: SnapshotRow,
  tail: readonly string[],
  pause?: () => Promise<void>,
): Promise<PgOpened | null> {
  const opened = await snapshotRows(runId, row, tail, pause);
  if (!opened || !(await foldTail(opened.fold, opened.scan.records, pause))) return null;
  const { fold, scan, snapshotAt } = opened;
  return { fold, lastSeq: fold.lastSeq, journalBytes: scan.goodLength, snapshotAt };
}

/** The run from its whole journal. */
export async function openWhole(runId: string, lines: readonly string[], pause?: () => Promise<void>): Promise<PgOpened> {
  const scan = checkedWhole(runId, await scanRows(runId, lines, {}, pause));
  const fold = await foldInSlices(scan.records, undefined, pause);
  return { fold, lastSeq: fold.lastSeq, journalBytes: scan.goodLength, snapshotAt: 0 };
}
