import { Buffer } from 'node:buffer';
import type { LedgerEntry } from '../ledger/schema';
import type { MessageParam } from '../model/messages';
import type { Patch } from '../patches/schema';
import { StoreError } from './contract';
import { CRC_SUFFIX_LENGTH, eagerRaw, lazyRecord, readFrame, type Frame } from './journal-frame';
import { entryOfPart, firstUndecodable, lazyPart, messageOfPart } from './lazy-record';
import type { RecordLog } from './record-log';
import { MIGRATIONS, upgradeRecord, type MigrationTable } from './migrations';
import { FORMAT_VERSION, StoreRecord, type StoredRecord } from './records';

// The records of a journal as columns over its bytes. A 10,000-step run is about 130,000 lines;
// building an object for each (and keeping them all until the fold is done) cost a resume more
// than reading the file. Here a line costs a few numbers in typed arrays: its type, where it is,
// and the keys a fold needs. What a state keeps is built from the bytes when it is asked for:
// the current ledger entries and the patches at once, messages and checkpoints on first read.
// Every line was checked when it was added (checksum, sequence, and the byte readers' checks of
// checkpoints and patches); a message or ledger entry meets its schema when first decoded.

const TYPES: readonly StoredRecord['type'][] = StoreRecord.options.map((option) => option.shape.type.value);
const TYPE_CODES = new Map(TYPES.map((type, code) => [type, code]));
const FIRST_CAPACITY = 1024;

/** A record decoded whole: an older format migrated, or a line the byte readers left to the schema. */
export function wholeRecord(frame: Frame, bytes: Uint8Array, file: string, offset: number, migrations: MigrationTable, readVersion: number): StoredRecord {
  const upgraded = upgradeRecord(eagerRaw(frame, bytes, file, offset), file, migrations, readVersion);
  const parsed = StoreRecord.safeParse(upgraded);
  if (!parsed.success) {
    throw new StoreError(`${file}: record ${frame.seq} at byte ${offset} does not match its schema: ${parsed.error.message}`, 'damaged', file, offset);
  }
  // parsed.data is a fresh object of zod's: numbering it in place spares a copy of every record.
  const record = parsed.data as StoreRecord & { seq: number };
  record.seq = frame.seq;
  return record;
}

function grown<T extends Float64Array | Uint8Array>(array: T, capacity: number): T {
  const next = new (array.constructor as new (length: number) => T)(capacity);
  next.set(array);
  return next;
}

export class JournalLog implements RecordLog {
  length = 0;
  /** The largest stepId of a message or checkpoint (what the run's state file counts as steps). */
  maxStepId = 0;
  private bytes: Buffer = Buffer.alloc(0);
  private types = new Uint8Array(FIRST_CAPACITY);
  private starts = new Float64Array(FIRST_CAPACITY);
  private ends = new Float64Array(FIRST_CAPACITY);
  private steps = new Float64Array(FIRST_CAPACITY);
  /** A message's index; for a record whose part stays as bytes, also where that part starts (partStarts). */
  private indexes = new Float64Array(FIRST_CAPACITY);
  private partStarts = new Float64Array(FIRST_CAPACITY);
  /** By line: a ledger entry's callId, a patch's patchId, or ''. */
  private keys: string[] = [];
  /** By line: the record when it is kept whole (patches, rare kinds, migrated records), else undefined. */
  private kept: (StoredRecord | undefined)[] = [];

  constructor(
    readonly file: string,
    private readonly migrations: MigrationTable = MIGRATIONS,
    private readonly readVersion = FORMAT_VERSION,
  ) {}

  /** The journal's bytes read so far: every view of the same file, each at least as long as the last. */
  setBytes(bytes: Buffer): void {
    this.bytes = bytes;
  }

  /** A record that stays as bytes: a message, a ledger record, a checkpoint read up to its stepId. */
  addPart(frame: Frame, start: number, end: number): void {
    const type = frame.part === 'message' ? 'message' : frame.part === 'entry' ? 'ledger' : 'checkpoint';
    const i = this.push(type, start, end, frame.stepId, frame.callId, undefined);
    this.indexes[i] = frame.index;
    this.partStarts[i] = frame.partStart;
    if (type !== 'ledger') this.countStep(frame.stepId);
  }

  /** A record the byte readers checked: a checkpoint is read again from its bytes when asked for, anything else is kept. */
  addChecked(record: StoredRecord, start: number, end: number): void {
    if (record.type !== 'checkpoint') return this.addRecord(record, start, end);
    this.push('checkpoint', start, end, record.stepId, '', undefined);
    this.countStep(record.stepId);
  }

  /** A record decoded whole (parsed and checked by its schema). */
  addRecord(record: StoredRecord, start: number, end: number): void {
    const stepId = record.type === 'ledger' ? record.entry.stepId : record.type === 'message' || record.type === 'checkpoint' ? record.stepId : 0;
    const key = record.type === 'ledger' ? record.entry.callId : record.type === 'patch' ? record.patch.patchId : '';
    const i = this.push(record.type, start, end, stepId, key, record);
    this.indexes[i] = record.type === 'message' ? record.index : -1;
    if (record.type === 'message' || record.type === 'checkpoint') this.countStep(record.stepId);
  }

  /** Forgets the lines from `length` on (an unfinished commit group). */
  truncate(length: number): void {
    if (length >= this.length) return;
    this.length = length;
    this.keys.length = length;
    this.kept.length = length;
    this.maxStepId = 0;
    for (let i = 0; i < length; i++) {
      const type = this.typeAt(i);
      if (type === 'message' || type === 'checkpoint') this.countStep(this.steps[i]!);
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
        if (error instanceof StoreError && error.offset !== undefined) return { records, damage: { offset: error.offset, message: error.message } };
        throw error;
      }
      const damage = firstUndecodable([record]);
      if (damage) return { records, damage };
      records.push(record);
    }
    return { records };
  }

  typeAt(i: number): StoredRecord['type'] {
    return TYPES[this.types[i]!]!;
  }

  seqAt(i: number): number {
    return i + 1;
  }

  record(i: number): StoredRecord {
    const kept = this.kept[i];
    if (kept) return kept;
    const start = this.starts[i]!;
    const frame = readFrame(this.bytes, start, this.ends[i]!);
    // Only a journal changed in memory since its scan could fail here: the scan read this line.
    if (!frame) throw new StoreError(`${this.file}: record ${i + 1} at byte ${start} no longer reads`, 'damaged', this.file, start);
    if (frame.part !== null) return lazyRecord(frame, this.bytes, this.file, start);
    return frame.checked ? (frame.raw as StoredRecord) : wholeRecord(frame, this.bytes, this.file, start, this.migrations, this.readVersion);
  }

  stepIdAt(i: number): number {
    return this.steps[i]!;
  }

  messageIndexAt(i: number): number {
    return this.indexes[i]!;
  }

  callIdAt(i: number): string {
    return this.keys[i]!;
  }

  patchIdAt(i: number): string {
    return this.keys[i]!;
  }

  messageAt(i: number): MessageParam {
    const kept = this.kept[i];
    if (kept) return (kept as Extract<StoredRecord, { type: 'message' }>).message;
    return messageOfPart(this.partOf(i));
  }

  ledgerEntryAt(i: number): LedgerEntry {
    const kept = this.kept[i];
    if (kept) return (kept as Extract<StoredRecord, { type: 'ledger' }>).entry;
    return entryOfPart(this.partOf(i));
  }

  patchAt(i: number): Patch {
    return ((this.kept[i] ?? this.record(i)) as Extract<StoredRecord, { type: 'patch' }>).patch;
  }

  private partOf(i: number) {
    // A part ends at the `}` before the checksum suffix that closes its record (journal-frame).
    const partEnd = this.ends[i]! - CRC_SUFFIX_LENGTH - 1;
    return lazyPart(this.bytes, this.partStarts[i]!, partEnd, this.file, this.starts[i]!, i + 1, this.keys[i]!, this.steps[i]!);
  }

  private countStep(stepId: number): void {
    if (stepId > this.maxStepId) this.maxStepId = stepId;
  }

  private push(type: StoredRecord['type'], start: number, end: number, stepId: number, key: string, kept: StoredRecord | undefined): number {
    const i = this.length;
    if (i === this.types.length) this.grow();
    this.types[i] = TYPE_CODES.get(type)!;
    this.starts[i] = start;
    this.ends[i] = end;
    this.steps[i] = stepId;
    this.indexes[i] = -1;
    this.keys.push(key);
    this.kept.push(kept);
    this.length = i + 1;
    return i;
  }

  private grow(): void {
    const capacity = this.types.length * 2;
    this.types = grown(this.types, capacity);
    this.starts = grown(this.starts, capacity);
    this.ends = grown(this.ends, capacity);
    this.steps = grown(this.steps, capacity);
    this.indexes = grown(this.indexes, capacity);
    this.partStarts = grown(this.partStarts, capacity);
  }
}
