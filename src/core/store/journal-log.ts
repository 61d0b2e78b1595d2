import { Buffer } from 'node:buffer';
import type { LedgerEntry } from '../ledger/schema';
import type { MessageParam } from '../model/messages';
import type { Patch } from '../patches/schema';
import { StoreError } from './contract';
import { CRC_SUFFIX_LENGTH, eagerRaw, lazyRecord, readFrame, type Frame } from './journal-frame';
import { entryOfPart, firstUndecodable, lazyPart, messageOfPart } from './lazy-record';
import { LineColumns } from './line-columns';
import { MIGRATIONS, upgradeRecord, type MigrationTable } from './migrations';
import type { RecordLog } from './record-log';
import { FORMAT_VERSION, StoreRecord, type StoredRecord } from './records';
import { SLICE, type Sliced } from './slices';

// The records of a journal as columns over its bytes. A 10,000-step run is about 130,000 lines;
// building an object for each (and keeping them all until the fold is done) cost a resume more
// than reading the file. Here a line costs a few numbers in typed arrays (line-columns.ts). What
// a state keeps is built from the bytes when it is asked for: the current ledger entries and the
// patches at once, messages and checkpoints on first read. Every line was checked before it was
// added (its checksum, or the resume index's checksum of the whole prefix, and its sequence); a
// record is checked against its schema when it is built.

/** A record decoded whole: an older format migrated, or a line the byte readers left to the schema. */
export function wholeRecord(
  frame: Frame,
  bytes: Uint8Array,
  file: string,
  offset: number,
  migrations: MigrationTable,
  readVersion: number,
): StoredRecord {
  const upgraded = upgradeRecord(eagerRaw(frame, bytes, file, offset), file, migrations, readVersion);
  const parsed = StoreRecord.safeParse(upgraded);
  if (!parsed.success) {
    throw new StoreError(
      `${file}: record ${frame.seq} at byte ${offset} does not match its schema: ${parsed.error.message}`,
      'damaged',
      file,
      offset,
    );
  }
  // parsed.data is a fresh object of zod's: numbering it in place spares a copy of every record.
  const record = parsed.data as StoreRecord & { seq: number };
  record.seq = frame.seq;
  return record;
}

const NEWLINE = 0x0a;

export interface ReadOptions {
  readonly file: string;
  readonly migrations: MigrationTable;
  readonly readVersion: number;
}

/**
 * Adds the line start..end of `bytes` (its frame just read, checksum checked) to `columns`, at
 * `base` + its offset in the file; returns the record when it had to be decoded now (a checked
 * byte read, or a whole decode), else undefined.
 */
export function addLine(
  columns: LineColumns,
  frame: Frame,
  bytes: Uint8Array,
  start: number,
  end: number,
  options: ReadOptions,
  base = 0,
): StoredRecord | undefined {
  if (frame.part !== null && frame.v === options.readVersion) {
    const type = frame.part === 'message' ? 'message' : frame.part === 'entry' ? 'ledger' : 'checkpoint';
    const partStart = frame.part === 'checkpoint' ? start : frame.partStart;
    columns.add(type, base + start, base + end, frame.stepId, frame.index, base + partStart, frame.callId, false);
    return undefined;
  }
  const checked = frame.checked && frame.raw.v === options.readVersion;
  const record = checked
    ? (frame.raw as StoredRecord)
    : wholeRecord(frame, bytes, options.file, base + start, options.migrations, options.readVersion);
  const stepId =
    record.type === 'ledger' ? record.entry.stepId : record.type === 'message' || record.type === 'checkpoint' ? record.stepId : 0;
  const key = record.type === 'ledger' ? record.entry.callId : record.type === 'patch' ? record.patch.patchId : '';
  columns.add(record.type, base + start, base + end, stepId, record.type === 'message' ? record.index : -1, base + start, key, !checked);
  return record;
}

/** Adds every line of `bytes`, lines a writer just framed that start at `base` in the file. */
export function addLinesOf(columns: LineColumns, bytes: Uint8Array, base: number, options: ReadOptions): void {
  let start = 0;
  for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE, start)) {
    const frame = readFrame(bytes, start, nl, 'scan');
    if (!frame)
      throw new StoreError(
        `${options.file}: a line just framed at byte ${base + start} does not read`,
        'invalid',
        options.file,
        base + start,
      );
    addLine(columns, frame, bytes, start, nl, options, base);
    start = nl + 1;
  }
}

/** The lines whose records every resume decodes: each call's latest ledger record, every patch; in file order. */
export function* resumeLines(columns: LineColumns): Sliced<number[]> {
  const latest = new Map<number, number>();
  const lines: number[] = [];
  for (let i = 0; i < columns.length; i++) {
    if (i % SLICE === SLICE - 1) yield;
    const type = columns.typeAt(i);
    if (type === 'ledger') latest.set(columns.keyIdAt(i), i);
    else if (type === 'patch') lines.push(i);
  }
  for (const i of latest.values()) lines.push(i);
  return lines.sort((a, b) => a - b);
}

export class JournalLog implements RecordLog {
  private bytes: Buffer = Buffer.alloc(0);
  /** By line: the record when the scan decoded it anyway (patches, rare kinds, migrated records). */
  private kept: (StoredRecord | undefined)[] = [];
  /** By line: a ledger entry decoded ahead (prefetch). */
  private entries: (LedgerEntry | undefined)[] = [];
  private readonly options: ReadOptions;

  constructor(
    readonly file: string,
    migrations: MigrationTable = MIGRATIONS,
    readVersion = FORMAT_VERSION,
    readonly columns = new LineColumns(),
  ) {
    this.options = { file, migrations, readVersion };
  }

  get length(): number {
    return this.columns.length;
  }

  get maxStepId(): number {
    return this.columns.maxStepId;
  }

  /** The journal's bytes read so far: every view of the same file, each at least as long as the last. */
  setBytes(bytes: Buffer): void {
    this.bytes = bytes;
  }

  /** Adds the line start..end whose frame was just read; a checkpoint is kept only as its line. */
  add(frame: Frame, start: number, end: number): void {
    const record = addLine(this.columns, frame, this.bytes, start, end, this.options);
    if (record && record.type !== 'checkpoint') this.kept[this.length - 1] = record;
  }

  /** Forgets the lines from `length` on (an unfinished commit group), and with `keyCount` the keys only they used. */
  truncate(length: number, keyCount?: number): void {
    this.columns.truncate(length, keyCount);
    if (this.kept.length > length) this.kept.length = length;
    if (this.entries.length > length) this.entries.length = length;
  }

  /**
   * Decodes line i's ledger entry or patch now, ahead of the state asking for it (while the rest
   * of the journal is still being read). A line that fails is left as it is: the state's read
   * then throws, naming it.
   */
  prefetch(i: number): void {
    try {
      const type = this.typeAt(i);
      if (type === 'ledger') this.entries[i] = this.ledgerEntryAt(i);
      else if (type === 'patch') this.kept[i] ??= this.record(i);
    } catch {
      // thrown again when the state reads the line
    }
  }

  /** Every record, built now. */
  records(): StoredRecord[] {
    const records: StoredRecord[] = [];
    for (let i = 0; i < this.length; i++) records.push(this.record(i));
    return records;
  }

  /** Every record decoded and checked now (verify): those before the first that fails its schema, and that failure. */
  decodeAll(): { records: StoredRecord[]; damage?: { offset: number; message: string } } {
    const records: StoredRecord[] = [];
    for (let i = 0; i < this.length; i++) {
      let record: StoredRecord;
      try {
        record = this.record(i);
      } catch (error) {
        if (error instanceof StoreError && error.offset !== undefined)
          return { records, damage: { offset: error.offset, message: error.message } };
        throw error;
      }
      const damage = firstUndecodable([record]);
      if (damage) return { records, damage };
      records.push(record);
    }
    return { records };
  }

  typeAt(i: number): StoredRecord['type'] {
    return this.columns.typeAt(i);
  }

  seqAt(i: number): number {
    return i + 1;
  }

  record(i: number): StoredRecord {
    const kept = this.kept[i];
    if (kept) return kept;
    const start = this.columns.startOf(i);
    const frame = readFrame(this.bytes, start, this.columns.endOf(i), 'reread', this.file);
    // The line was read (or its prefix checked) when the journal was opened: only bytes changed in memory since fail here.
    if (!frame || frame.seq !== i + 1)
      throw new StoreError(`${this.file}: record ${i + 1} at byte ${start} no longer reads`, 'damaged', this.file, start);
    if (frame.part !== null && !this.columns.isWhole(i)) return lazyRecord(frame, this.bytes, this.file, start);
    if (frame.checked && !this.columns.isWhole(i)) return frame.raw as StoredRecord;
    return wholeRecord(frame, this.bytes, this.file, start, this.options.migrations, this.options.readVersion);
  }

  stepIdAt(i: number): number {
    return this.columns.stepIdAt(i);
  }

  messageIndexAt(i: number): number {
    return this.columns.indexAt(i);
  }

  callIdAt(i: number): string {
    return this.columns.keyAt(i);
  }

  patchIdAt(i: number): string {
    return this.columns.keyAt(i);
  }

  messageAt(i: number): MessageParam {
    if (this.kept[i] || this.columns.isWhole(i)) return (this.record(i) as Extract<StoredRecord, { type: 'message' }>).message;
    return messageOfPart(this.partOf(i));
  }

  ledgerEntryAt(i: number): LedgerEntry {
    const decoded = this.entries[i];
    if (decoded) return decoded;
    if (this.kept[i] || this.columns.isWhole(i)) return (this.record(i) as Extract<StoredRecord, { type: 'ledger' }>).entry;
    return entryOfPart(this.partOf(i));
  }

  patchAt(i: number): Patch {
    return (this.record(i) as Extract<StoredRecord, { type: 'patch' }>).patch;
  }

  private partOf(i: number) {
    // A part ends at the `}` before the checksum suffix that closes its record (journal-frame).
    const partEnd = this.columns.endOf(i) - CRC_SUFFIX_LENGTH - 1;
    const start = this.columns.startOf(i);
    return lazyPart(
      this.bytes,
      this.columns.partStartOf(i),
      partEnd,
      this.file,
      start,
      i + 1,
      this.columns.keyAt(i),
      this.columns.stepIdAt(i),
    );
  }
}
