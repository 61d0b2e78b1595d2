import { crc32 } from 'node:zlib';
import { z } from 'zod';
import { StoreError } from './contract';
import { MIGRATIONS, upgradeRecord, type MigrationTable } from './migrations';
import { FORMAT_VERSION, StoreRecord, type StoredRecord } from './records';
import { inSlices, type Sliced } from './slices';

// One record a line: {"s":<seq>,"b":<first seq of its commit group>,"e":<last seq of the group>,
// "r":<record>,"c":"<crc32>"}. The crc covers every byte of the line before `,"c":`.
// A commit group is all-or-nothing. A torn write (power lost before the group's fsync) leaves a
// prefix of the group's bytes: lines that hold but do not close the group, then maybe a last line
// without its newline. Those are cut. A complete line (it ends with a newline) whose checksum fails
// is damage wherever it is, the last group included: its bytes cannot be told from an acknowledged
// group's, so nothing proves it may be dropped. A line is read with JSON.parse and its record
// checked against its zod schema (migrated first when older): one schema per record, no other parser.

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const NEWLINE = 0x0a;
/** `,"c":"01234567"}`: the checksum suffix of every line. */
const SUFFIX = 16;
const SUFFIX_PATTERN = /^,"c":"([0-9a-f]{8})"}$/;
/** Bytes read between two yields (the pause lets the event loop run when enough time went by). */
const SLICE_BYTES = 2 * 1024;

/** `head` (a JSON object without its closing brace) closed with the checksum of its bytes, and a newline. */
export function checksummed(head: string): string {
  return `${head},"c":"${crc32(encoder.encode(head)).toString(16).padStart(8, '0')}"}\n`;
}

export function encodeGroup(records: readonly StoredRecord[]): Uint8Array {
  const first = records[0]?.seq ?? 0;
  const last = records[records.length - 1]?.seq ?? 0;
  return encoder.encode(
    records.map(({ seq, ...record }) => checksummed(`{"s":${seq},"b":${first},"e":${last},"r":${JSON.stringify(record)}`)).join(''),
  );
}

/** Where the last line of `bytes` (complete lines) starts, and the checksum it states. */
export function lastLineOf(bytes: Uint8Array): { start: number; crc: string } {
  const start = bytes.lastIndexOf(NEWLINE, bytes.length - 2) + 1;
  return { start, crc: decoder.decode(bytes.subarray(bytes.length - 11, bytes.length - 3)) };
}

/** Where the line of record `seq` lies in its journal: from `start` to `end` (past its newline), stating checksum `crc`. */
export const LineRef = z.object({
  start: z.number().int().nonnegative(),
  end: z.number().int().positive(),
  crc: z.string().regex(/^[0-9a-f]{8}$/),
  seq: z.number().int().nonnegative(),
});
export type LineRef = z.infer<typeof LineRef>;

/** The lines of those of `records` that `wanted` picks, one a line in `bytes` (complete lines, from file offset `base` on). */
export function lineRefs(
  bytes: Uint8Array,
  base: number,
  records: readonly StoredRecord[],
  wanted: (record: StoredRecord) => boolean,
): Array<LineRef | undefined> {
  let start = 0;
  return records.map((record) => {
    const nl = bytes.indexOf(NEWLINE, start);
    const crc = wanted(record) ? decoder.decode(bytes.subarray(nl - 10, nl - 2)) : undefined;
    const ref = crc === undefined ? undefined : { start: base + start, end: base + nl + 1, crc, seq: record.seq };
    start = nl + 1;
    return ref;
  });
}

/**
 * The record of the line `ref` names, read from `bytes` (from file offset `base` on): null unless
 * the line is there whole, states that checksum and seq, holds, and matches its record schema.
 */
export function recordAtLine(bytes: Uint8Array, base: number, ref: LineRef, options: ReadOptions): StoredRecord | null {
  const start = ref.start - base;
  const end = ref.end - base;
  if (start < 0 || end > bytes.length || bytes[end - 1] !== NEWLINE) return null;
  const line = readLine(bytes, start, end - 1);
  if (!line || line.c !== ref.crc || line.s !== ref.seq) return null;
  try {
    return recordOf(line, options, ref.start);
  } catch {
    return null;
  }
}

interface Line {
  readonly s: number;
  readonly b: number;
  readonly e: number;
  readonly r: Record<string, unknown>;
  readonly c: string;
}

/** The JSON of the line start..end (without its newline) when its checksum holds; else null. */
export function readChecked(bytes: Uint8Array, start: number, end: number): unknown {
  if (end - start <= SUFFIX) return null;
  try {
    const stated = SUFFIX_PATTERN.exec(decoder.decode(bytes.subarray(end - SUFFIX, end)));
    if (!stated || crc32(bytes.subarray(start, end - SUFFIX)) !== parseInt(stated[1]!, 16)) return null;
    return JSON.parse(decoder.decode(bytes.subarray(start, end))) as unknown;
  } catch {
    return null;
  }
}

/** The journal line start..end when its checksum holds and it is a frame; else null. */
export function readLine(bytes: Uint8Array, start: number, end: number): Line | null {
  const line = readChecked(bytes, start, end) as Partial<Line> | null;
  const { s, b, e, r } = line ?? {};
  if (typeof s !== 'number' || typeof b !== 'number' || typeof e !== 'number') return null;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return null;
  return line as Line;
}

export interface ReadOptions {
  readonly file: string;
  readonly migrations?: MigrationTable;
  readonly readVersion?: number;
  /** Where `bytes` starts in the file (a tail read after a snapshot) and the seq its first line must have. */
  readonly base?: number;
  readonly firstSeq?: number;
}

export interface JournalScan {
  /** The records of every complete commit group. */
  readonly records: StoredRecord[];
  /** Offset in the file of the end of the last complete commit group. */
  readonly goodLength: number;
  /** Bytes after goodLength that a writer cuts: the lines of an unclosed commit group and a last line without its newline. */
  readonly tornTail?: { offset: number; bytes: number };
  /** A complete line that does not hold (checksum, sequence, schema): the journal cannot be written as it is. */
  readonly damage?: { offset: number; message: string };
}

/** The record of a line whose checksum held, migrated and checked against its schema; throws StoreError. */
function recordOf(line: Line, options: ReadOptions, offset: number): StoredRecord {
  const { file } = options;
  const upgraded = upgradeRecord(line.r, file, options.migrations ?? MIGRATIONS, options.readVersion ?? FORMAT_VERSION);
  const parsed = StoreRecord.safeParse(upgraded);
  if (!parsed.success) {
    throw new StoreError(
      `${file}: record ${line.s} at byte ${offset} does not match its schema: ${parsed.error.message}`,
      'damaged',
      file,
      offset,
    );
  }
  const record = parsed.data as StoredRecord & { seq: number };
  record.seq = line.s;
  return record;
}

/**
 * Reads a journal (or its tail after a snapshot) as the top of this file says, every line checked
 * (checksum, sequence, group, version, schema). Throws StoreError('future_version') for a
 * checksum-valid record this build cannot read.
 */
function* scanning(bytes: Uint8Array, options: ReadOptions): Sliced<JournalScan> {
  const base = options.base ?? 0;
  const records: StoredRecord[] = [];
  let expected = options.firstSeq ?? 1;
  let groupFirst = expected;
  let kept = 0;
  let goodLength = 0;
  let start = 0;
  let sliceEnd = SLICE_BYTES;
  const result = (extra: Partial<JournalScan> = {}): JournalScan => {
    records.length = kept;
    return { records, goodLength: base + goodLength, ...extra };
  };
  const damage = (at: number, message: string) => result({ damage: { offset: base + at, message } });
  for (let nl = bytes.indexOf(NEWLINE); nl !== -1; nl = bytes.indexOf(NEWLINE, start)) {
    if (nl > sliceEnd) {
      sliceEnd = nl + SLICE_BYTES;
      yield;
    }
    const line = readLine(bytes, start, nl);
    if (!line) return damage(start, 'a complete line (it ends with a newline) does not match its checksum');
    if (line.s !== expected || line.b !== groupFirst) {
      return damage(start, `sequence ${line.s} (group from ${line.b}) where ${expected} (group from ${groupFirst}) was expected`);
    }
    try {
      records.push(recordOf(line, options, base + start));
    } catch (error) {
      if (error instanceof StoreError && error.code !== 'future_version') return damage(start, error.message);
      throw error;
    }
    expected += 1;
    start = nl + 1;
    if (line.s === line.e) {
      groupFirst = expected;
      kept = records.length;
      goodLength = start;
    }
  }
  // A last line that holds once its last byte is dropped is complete: its newline was changed, not lost.
  if (start < bytes.length && readLine(bytes, start, bytes.length - 1)) {
    return damage(start, 'the last line ends in a byte that is not its newline');
  }
  return result(goodLength === bytes.length ? {} : { tornTail: { offset: base + goodLength, bytes: bytes.length - goodLength } });
}

/** Reads a journal (or a tail), letting `pause` (the event loop) run between slices; without `pause`, at once. */
export function scanJournal(bytes: Uint8Array, options: ReadOptions, pause?: () => Promise<void>): Promise<JournalScan> {
  return inSlices(scanning(bytes, options), pause);
}
