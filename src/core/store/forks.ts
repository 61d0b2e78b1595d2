import { StoreError, type ForkRequest, type RunSummary } from './contract';
import type { JournalStore, OpenedRun } from './store';
import { encodeGroup, lastLineOf, readLine, scanJournal, type JournalScan } from './journal-format';
import { pointAt } from './facts-log';
import type { ForkRecord, StoredRecord } from './records';
import { forkRecords, forkSteps } from './stamp';
import { foldTail, type FoldState } from './fold';
import { forkFromParts, pastPoint, type ParentParts } from './fork-fold';
import {
  journalAfter,
  readSnapshot,
  readSnapshotRun,
  rememberLines,
  snapshotNames,
  snapshotSeq,
  snapshotHead,
  type JournalAt,
  type JournalPoint,
  type RecordLines,
} from './snapshots';

// Forks. A fork's journal begins with a `fork` record, numbered after the parent's record it
// stands on; nothing of the parent is copied. Reading the
// fork reads the parent's journal up to that line (checked: it ends at the stated byte with the
// stated checksum and seq) before its own; the fold (fold.ts) does the rest.

const NEWLINE = 0x0a;

/** The seq the first line of a journal states (1 when it cannot be read: the scan then reports the damage). */
export function firstSeqOf(bytes: Uint8Array): number {
  const end = bytes.indexOf(NEWLINE);
  return (end === -1 ? null : readLine(bytes, 0, end))?.s ?? 1;
}

/** The parent's journal end now (its point, steps and task), from its listing row and its last line: O(1) in its length. */
async function journalEnd(store: JournalStore, runId: string): Promise<{ point: JournalPoint; steps: number; task: string }> {
  const size = await store.device.journalSize(runId);
  if (size === null) throw new StoreError(`run ${runId} not found`, 'not_found', store.device.journalName(runId));
  const row = await store.device.readListing(runId);
  // The listing row is a cache rewritten now and then: one the journal has grown past (a writer
  // killed since) names an older end, and a fork on it would lack the records after it.
  if (row && row.journalBytes > 0 && row.journalBytes === size) {
    const point = await pointAt(store, runId, size, row.lastSeq);
    if (await journalAfter(store.journal(runId), point)) return { point, steps: row.steps, task: row.task };
  }
  // No listing row that matches the journal: the run read (a rare, slower way).
  const { fold, scan } = await store.openRun(runId);
  return { point: await pointAt(store, runId, scan.goodLength, fold.lastSeq), steps: fold.stepId, task: fold.run.task };
}

/** Starts a fork: its journal of one `fork` record, its listing row, no lease. */
export async function forkRun(store: JournalStore, parentId: string, fork: ForkRequest): Promise<RunSummary> {
  const end = await journalEnd(store, parentId);
  const now = store.settings.clock.now();
  const { lastSeq: seq, journalBytes, lastLineCrc: lineCrc } = end.point;
  const stamped = forkRecords(parentId, fork, { seq, steps: end.steps, journalBytes, lineCrc }, now);
  const bytes = encodeGroup(stamped);
  const summary = {
    runId: fork.runId,
    task: end.task,
    createdAt: now,
    status: 'paused' as const,
    updatedAt: now,
    steps: forkSteps(fork),
    parent: { runId: parentId, step: fork.step },
  };
  await store.device.createRun(fork.runId, bytes, { ...summary, lastSeq: seq + 1, journalBytes: bytes.length }, null);
  return { ...summary, leased: false };
}

/** The parent's records a fork stands on, its own parents' first; checked against the fork's pointer. */
export async function parentRecords(store: JournalStore, fork: ForkRecord, depth = 0): Promise<StoredRecord[]> {
  const { parent } = fork;
  const journal = store.device.journalName(parent.runId);
  const broken = (why: string) =>
    new StoreError(
      `fork ${fork.runId} stands on ${journal} up to record ${parent.seq}, but ${why}`,
      'damaged',
      journal,
      parent.journalBytes,
    );
  if (depth > 1000) throw broken('the forks go round in a circle');
  const all = await store.device.readJournal(parent.runId).catch((error: unknown) => {
    throw error instanceof StoreError && error.code === 'not_found' ? broken('that run is gone') : error;
  });
  const length = parent.journalBytes ?? all.length;
  if (all.length < length) throw broken(`the journal holds only ${all.length} bytes`);
  const bytes = all.subarray(0, length);
  const scan = await scanJournal(bytes, store.journal(parent.runId, firstSeqOf(bytes)).read);
  if (scan.damage || scan.tornTail) throw broken(`it does not read back there (${scan.damage?.message ?? 'an unclosed commit group'})`);
  const records = parent.journalBytes === undefined ? scan.records.filter((r) => r.seq <= parent.seq) : scan.records;
  if (records.at(-1)?.seq !== parent.seq) throw broken(`its record there is ${records.at(-1)?.seq ?? 'none'}`);
  if (parent.lineCrc !== undefined && lastLineOf(bytes).crc !== parent.lineCrc) throw broken('the checksum of that line differs');
  const first = records[0];
  if (first?.type === 'fork') return [...(await parentRecords(store, first, depth + 1)), ...records];
  if (first?.type !== 'run' || first.runId !== parent.runId) throw broken("it is not that run's journal");
  return records;
}

/** The least bytes of a parent's journal read after the snapshot a fork's step is taken from; four times as many each time the step is further on. */
const FIRST_WINDOW = 64 << 10;

/**
 * A fork's state without reading its parent whole: the parent's newest snapshot before the fork's
 * step and the journal after it up to that step, its snapshot at the point the fork stands on,
 * then the fork's own journal (`own`, scanned from `bytes`; forkFromParts). null when that does not
 * hold: the caller reads the parent whole, which says why.
 */
export async function openForkFromParent(store: JournalStore, bytes: Uint8Array, own: JournalScan): Promise<OpenedRun | null> {
  const fork = own.records[0];
  if (own.damage || fork?.type !== 'fork' || fork.parent.journalBytes === undefined) return null;
  const parts = await parentParts(store, fork);
  const state = parts && (await forkFromParts(fork, parts));
  if (!state || !(await foldTail(state, own.records.slice(1), store.pause))) return null;
  const lines: RecordLines = new WeakMap();
  rememberLines(lines, bytes, 0, own.records);
  // The facts a writer needs (pending ids, references) come from the caches, or the whole read, after this point.
  const scan = { records: [], goodLength: own.goodLength, ...(own.tornTail ? { tornTail: own.tornTail } : {}) };
  return { fold: state, scan, snapshotAt: own.goodLength, lines };
}

/** The two states of the parent a fork is folded from (forkFromParts); null when its snapshots do not give them. */
async function parentParts(store: JournalStore, fork: ForkRecord): Promise<ParentParts | null> {
  const { parent } = fork;
  const journal = store.journal(parent.runId);
  const names = (await snapshotNames(store.device, parent.runId)).filter((name) => snapshotSeq(name) <= parent.seq);
  const end = await parentEnd(journal, names, fork);
  const name = end && (await snapshotBefore(journal, names, parent.step - 1));
  const snapshot = name && (await readSnapshot(store.device, parent.runId, name));
  if (!end || !snapshot || snapshot.state.stepId >= parent.step - 1) return null;
  // The journal after it up to the fork's point: first as many bytes as its steps took each so far
  // (a quarter more), four times as many each time that falls short.
  const perStep = snapshot.journalBytes / Math.max(1, snapshot.state.stepId);
  const guess = Math.max(FIRST_WINDOW, Math.ceil(perStep * (parent.step + 1 - snapshot.state.stepId) * 1.25));
  for (let window = guess; ; window *= 4) {
    const until = Math.min(parent.journalBytes!, snapshot.journalBytes + window);
    const before = await readSnapshotRun(journal, snapshot, until);
    if (!before || before.scan.damage) return null;
    if (before.scan.records.some((r) => pastPoint(fork, r))) return { before: before.fold, after: before.scan.records, end };
    if (until === parent.journalBytes) return null;
  }
}

/**
 * Of snapshot names (newest first), the newest whose step is below `step`, found by halves (the
 * steps of a run's snapshots grow with their seq; one that does not is checked by the caller).
 */
async function snapshotBefore({ device, runId }: JournalAt, names: readonly string[], step: number): Promise<string | null> {
  let [low, high] = [0, names.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    const head = await snapshotHead(device, runId, names[mid]!);
    if (head && head.stepId < step) high = mid;
    else low = mid + 1;
  }
  return names[low] ?? null;
}

/** The parent's state at the record the fork stands on, from its newest snapshot at or before it that holds; null when none does. */
async function parentEnd(journal: JournalAt, names: readonly string[], { parent }: ForkRecord): Promise<FoldState | null> {
  for (const name of names) {
    const snapshot = await readSnapshot(journal.device, journal.runId, name);
    const opened = snapshot && (await readSnapshotRun(journal, snapshot, parent.journalBytes));
    const { scan, bytes, from } = opened ?? {};
    if (!opened || !scan || !bytes || scan.damage || scan.tornTail || scan.goodLength !== parent.journalBytes) continue;
    if (opened.fold.lastSeq + scan.records.length !== parent.seq) continue;
    if (parent.lineCrc !== undefined && lastLineOf(bytes.subarray(0, parent.journalBytes! - from!)).crc !== parent.lineCrc) continue;
    if (await foldTail(opened.fold, scan.records, journal.device.pause)) return opened.fold;
  }
  return null;
}
