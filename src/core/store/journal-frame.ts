import { Buffer } from 'node:buffer';
import { StoreError } from './contract';
import { crc32 } from './crc32';
import { lit } from './byte-fields';
import { readCheckpointRecord } from './checkpoint-bytes';
import { readPatchRecord } from './patch-bytes';
import { lazyLedgerRecord, lazyMessageRecord, lazyPart } from './lazy-record';
import type { StoredRecord } from './records';

// Reading one journal line. The checksum is checked on the raw bytes before anything is decoded,
// so every later step works on bytes proven to be what the writer wrote. The bulky part of a
// message record (its message) and of a ledger record (its entry) stays as those bytes, parsed on
// first read (lazy-record.ts). A scan also leaves a checkpoint as bytes once its stepId is read
// (journal-log.ts reads the rest when the record is asked for): a resume parses only the ledger
// entries that are still current, the patches, and the checkpoints whose status and budget it keeps.

export const CRC_SUFFIX_LENGTH = ',"c":"00000000"}'.length;
const CRC_SUFFIX_HEAD = Buffer.from(',"c":"');
const CRC_SUFFIX_CLOSE = Buffer.from('"}');
const CLOSE_BRACE = 0x7d;

/** A line whose checksum holds. */
export interface Frame {
  seq: number;
  groupFirst: number;
  closesGroup: boolean;
  /**
   * A record in the writer's arrangement that stays as bytes, its fields below: a message or
   * ledger record (its message or entry the part), or, when a scan asks for it, a checkpoint
   * (the whole record the part, read only up to its stepId). Null for a record in `raw`.
   */
  part: 'message' | 'entry' | 'checkpoint' | null;
  v: number;
  at: number;
  /** A message's index (-1 for a ledger record). */
  index: number;
  /** A message's stepId, or a ledger entry's. */
  stepId: number;
  /** A ledger entry's callId ('' for a message). */
  callId: string;
  /** The part's JSON text: bytes partStart..partEnd of the line's buffer. */
  partStart: number;
  partEnd: number;
  /** The record, when `part` is null. */
  raw: Record<string, unknown>;
  /** `raw` is a complete record, numbered, already checked field by field against its schema by the byte reader. */
  checked: boolean;
}

// A resume reads about 100,000 lines: one frame and one cursor serve them all, so reading a line
// allocates only what the record keeps. readFrame's result is valid until its next call.
const NO_RECORD: Record<string, unknown> = Object.freeze({});
const frame: Frame = {
  seq: 0,
  groupFirst: 0,
  closesGroup: false,
  part: null,
  v: 0,
  at: 0,
  index: -1,
  stepId: 0,
  callId: '',
  partStart: 0,
  partEnd: 0,
  raw: NO_RECORD,
  checked: false,
};

function framed(seq: number, groupFirst: number, closesGroup: boolean, raw: Record<string, unknown>, checked: boolean): Frame {
  frame.seq = seq;
  frame.groupFirst = groupFirst;
  frame.closesGroup = closesGroup;
  frame.part = null;
  frame.raw = raw;
  frame.checked = checked;
  return frame;
}

/** The shared frame as a message (index >= 0) or ledger record whose part stays as bytes. */
function framedPart(
  part: 'message' | 'entry' | 'checkpoint',
  v: number,
  at: number,
  index: number,
  stepId: number,
  callId: string,
  partStart: number,
  partEnd: number,
): Frame {
  frame.part = part;
  frame.v = v;
  frame.at = at;
  frame.index = index;
  frame.stepId = stepId;
  frame.callId = callId;
  frame.partStart = partStart;
  frame.partEnd = partEnd;
  return frame;
}

export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}

function bytesAt(bytes: Uint8Array, at: number, expected: Uint8Array, end: number): boolean {
  if (at < 0 || at + expected.length > end) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/** The checksum the line's suffix states, or -1 when the suffix is not a checksum. */
function statedCrc(bytes: Buffer, suffixStart: number, end: number): number {
  if (!bytesAt(bytes, suffixStart, CRC_SUFFIX_HEAD, end) || !bytesAt(bytes, end - CRC_SUFFIX_CLOSE.length, CRC_SUFFIX_CLOSE, end))
    return -1;
  let value = 0;
  for (let at = suffixStart + CRC_SUFFIX_HEAD.length; at < end - CRC_SUFFIX_CLOSE.length; at++) {
    const digit = hexDigit(bytes[at]!);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// The writer frames every record as `{"s":..,"b":..,"e":..,"r":` + record + the checksum suffix,
// with the record's fields in schema order and a message record's message, a ledger record's entry
// last (encodeGroup). Such a part is exactly the bytes between its key and the `}` that closes the
// record. A line in any other arrangement is parsed whole.
const FRAME_S = lit('{"s":');
const FRAME_B = lit(',"b":');
const FRAME_E = lit(',"e":');
const FRAME_R = lit(',"r":');
const RECORD_V = lit('{"v":');
const RECORD_AT = lit(',"at":');
const MESSAGE_HEAD = lit(',"type":"message","index":');
const MESSAGE_STEP = lit(',"stepId":');
const MESSAGE_KEY = lit(',"message":');
const LEDGER_HEAD = lit(',"type":"ledger","entry":');
const ENTRY_CALL = lit('{"callId":');
const ENTRY_STEP = lit(',"stepId":');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Reads a frame head left to right; any byte out of place makes the read fail (-1 / undefined / NaN). */
export class Cursor {
  bytes: Buffer = Buffer.alloc(0);
  at = 0;
  end = 0;
  /** The file the bytes are from and where the line starts in it, for errors found later. */
  file = '';
  lineStart = 0;

  reset(bytes: Buffer, at: number, end: number): this {
    this.bytes = bytes;
    this.at = at;
    this.end = end;
    return this;
  }

  moveTo(at: number): this {
    this.at = at;
    return this;
  }

  literal(expected: Buffer): boolean {
    if (!bytesAt(this.bytes, this.at, expected, this.end)) return false;
    this.at += expected.length;
    return true;
  }

  /** A non-negative JSON integer of at most 15 digits. */
  integer(): number {
    const start = this.at;
    let value = 0;
    while (this.at < this.end && this.at - start < 15) {
      const byte = this.bytes[this.at]!;
      if (byte < 0x30 || byte > 0x39) break;
      value = value * 10 + (byte - 0x30);
      this.at++;
    }
    if (this.at === start || (this.bytes[start] === 0x30 && this.at - start > 1)) return -1;
    return value;
  }

  /** Moves past what plainString reads, without making the string. */
  skipPlainString(): boolean {
    if (this.bytes[this.at] !== QUOTE) return false;
    for (let at = this.at + 1; at < this.end; at++) {
      const byte = this.bytes[at]!;
      if (byte === QUOTE) {
        this.at = at + 1;
        return true;
      }
      if (byte === BACKSLASH || byte < 0x20 || byte > 0x7e) return false;
    }
    return false;
  }

  /** A JSON string without escapes or control characters, ASCII only. */
  plainString(): string | undefined {
    if (this.bytes[this.at] !== QUOTE) return undefined;
    const start = this.at + 1;
    for (let at = start; at < this.end; at++) {
      const byte = this.bytes[at]!;
      if (byte === QUOTE) {
        this.at = at + 1;
        return this.bytes.toString('latin1', start, at);
      }
      if (byte === BACKSLASH || byte < 0x20 || byte > 0x7e) return undefined;
    }
    return undefined;
  }

  /** A non-negative finite JSON number (integer, fraction, exponent). */
  number(): number {
    const start = this.at;
    if (this.peek() === 0x30) this.at++;
    else if (this.digits() === 0) return Number.NaN;
    if (this.peek() === 0x2e) {
      this.at++;
      if (this.digits() === 0) return Number.NaN;
    }
    const e = this.peek();
    if (e === 0x65 || e === 0x45) {
      this.at++;
      const sign = this.peek();
      if (sign === 0x2b || sign === 0x2d) this.at++;
      if (this.digits() === 0) return Number.NaN;
    }
    const value = Number(this.bytes.toString('latin1', start, this.at));
    return Number.isFinite(value) ? value : Number.NaN;
  }

  private peek(): number {
    return this.at < this.end ? this.bytes[this.at]! : -1;
  }

  private digits(): number {
    const start = this.at;
    while (this.at < this.end) {
      const byte = this.bytes[this.at]!;
      if (byte < 0x30 || byte > 0x39) break;
      this.at++;
    }
    return this.at - start;
  }
}

/** A message or ledger record with its part left as bytes, as the shared frame; or null. */
function lazyFrame(cursor: Cursor, v: number, at: number, seq: number, groupFirst: number, closesGroup: boolean): Frame | null {
  const partEnd = cursor.end - 1;
  if (cursor.bytes[partEnd] !== CLOSE_BRACE) return null;
  const mark = cursor.at;
  if (cursor.literal(MESSAGE_HEAD)) {
    const index = cursor.integer();
    if (index < 0 || !cursor.literal(MESSAGE_STEP)) return null;
    const stepId = cursor.integer();
    if (stepId < 0 || !cursor.literal(MESSAGE_KEY) || cursor.at >= partEnd) return null;
    framed(seq, groupFirst, closesGroup, NO_RECORD, false);
    return framedPart('message', v, at, index, stepId, '', cursor.at, partEnd);
  }
  cursor.at = mark;
  if (!cursor.literal(LEDGER_HEAD)) return null;
  const partStart = cursor.at;
  if (!cursor.literal(ENTRY_CALL)) return null;
  const callId = cursor.plainString();
  if (!callId || !cursor.literal(ENTRY_STEP)) return null;
  const stepId = cursor.integer();
  if (stepId < 0) return null;
  framed(seq, groupFirst, closesGroup, NO_RECORD, false);
  return framedPart('entry', v, at, -1, stepId, callId, partStart, partEnd);
}

const CHECKPOINT_HEAD = lit(',"type":"checkpoint","checkpointId":');

/** A checkpoint read up to its stepId (the rest is read when the record is asked for); or null. */
function checkpointFrame(
  cursor: Cursor,
  bodyStart: number,
  v: number,
  at: number,
  seq: number,
  groupFirst: number,
  closesGroup: boolean,
): Frame | null {
  if (!cursor.literal(CHECKPOINT_HEAD) || !cursor.skipPlainString() || !cursor.literal(ENTRY_STEP)) return null;
  const stepId = cursor.integer();
  if (stepId < 0) return null;
  framed(seq, groupFirst, closesGroup, NO_RECORD, false);
  return framedPart('checkpoint', v, at, -1, stepId, '', bodyStart, cursor.end);
}

/**
 * A record in the writer's arrangement: message and ledger records lazy, with `checkpointHeads`
 * checkpoints too, any other parsed now.
 */
const lineCursor = new Cursor();

function framedRecord(bytes: Buffer, start: number, suffixStart: number, checkpointHeads: boolean, file: string): Frame | null {
  const cursor = lineCursor.reset(bytes, start, suffixStart);
  cursor.file = file;
  cursor.lineStart = start;
  if (!cursor.literal(FRAME_S)) return null;
  const seq = cursor.integer();
  if (seq < 0 || !cursor.literal(FRAME_B)) return null;
  const groupFirst = cursor.integer();
  if (groupFirst < 0 || !cursor.literal(FRAME_E)) return null;
  const last = cursor.integer();
  if (last < 0 || !cursor.literal(FRAME_R)) return null;
  const closesGroup = seq === last;
  const bodyStart = cursor.at;
  if (cursor.literal(RECORD_V)) {
    const v = cursor.integer();
    if (v > 0 && cursor.literal(RECORD_AT)) {
      const at = cursor.integer();
      const afterAt = cursor.at;
      const lazy = at >= 0 ? lazyFrame(cursor, v, at, seq, groupFirst, closesGroup) : null;
      if (lazy) return lazy;
      const head =
        checkpointHeads && at >= 0 ? checkpointFrame(cursor.moveTo(afterAt), bodyStart, v, at, seq, groupFirst, closesGroup) : null;
      if (head) return head;
      cursor.at = afterAt;
      const checked = at >= 0 ? (readCheckpointRecord(cursor, v, at, seq) ?? readPatchRecord(cursor.moveTo(afterAt), v, at, seq)) : null;
      if (checked) return framed(seq, groupFirst, closesGroup, checked, true);
    }
  }
  const raw = parseJson(bytes, bodyStart, suffixStart);
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw)
    ? framed(seq, groupFirst, closesGroup, raw as Record<string, unknown>, false)
    : null;
}

function parseJson(bytes: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(bytes.toString('utf8', start, end)) as unknown;
  } catch {
    return undefined;
  }
}

/** Any other arrangement of a line: the whole line as JSON. */
function parsedFrame(bytes: Buffer, start: number, end: number): Frame | null {
  const line = parseJson(bytes, start, end) as { s?: unknown; b?: unknown; e?: unknown; r?: unknown } | undefined;
  if (typeof line !== 'object' || line === null) return null;
  if (typeof line.s !== 'number' || typeof line.b !== 'number' || typeof line.e !== 'number') return null;
  if (typeof line.r !== 'object' || line.r === null || Array.isArray(line.r)) return null;
  return framed(line.s, line.b, line.s === line.e, line.r as Record<string, unknown>, false);
}

/**
 * How a line is read: `scan` (its checksum checked, a checkpoint only up to its stepId), `full`
 * (its checksum checked, every record whole), `reread` (a line already proven, by its own
 * checksum or the resume index's checksum of the bytes it lies in: not checked again).
 */
export type FrameMode = 'scan' | 'full' | 'reread';

/**
 * A line whose checksum holds, or null (torn or flipped bytes). The frame is shared: read it
 * before the next call. `file` names the journal in errors found later (a lazily read part).
 */
export function readFrame(input: Uint8Array, start: number, end: number, mode: FrameMode = 'full', file = ''): Frame | null {
  if (end - start <= CRC_SUFFIX_LENGTH) return null;
  const bytes = asBuffer(input);
  const suffixStart = end - CRC_SUFFIX_LENGTH;
  const stated = statedCrc(bytes, suffixStart, end);
  if (stated < 0) return null;
  if (mode !== 'reread' && crc32(new Uint8Array(bytes.buffer, bytes.byteOffset + start, suffixStart - start)) !== stated) return null;
  return framedRecord(bytes, start, suffixStart, mode === 'scan', file) ?? parsedFrame(bytes, start, end);
}

/** The record with its part decoded: for records that need migrating or a version check. */
export function eagerRaw(frame: Frame, bytes: Uint8Array, file: string, offset: number): Record<string, unknown> {
  if (frame.part === null) return frame.raw;
  const text = asBuffer(bytes).toString('utf8', frame.partStart, frame.partEnd);
  let part: unknown;
  try {
    part = JSON.parse(text) as unknown;
  } catch (error) {
    throw new StoreError(
      `${file}: record ${frame.seq} at byte ${offset} is not JSON: ${(error as Error).message}`,
      'damaged',
      file,
      offset,
    );
  }
  const { v, at } = frame;
  if (frame.part === 'checkpoint') return part as Record<string, unknown>;
  return frame.part === 'message'
    ? { v, at, type: 'message', index: frame.index, stepId: frame.stepId, message: part }
    : { v, at, type: 'ledger', entry: part };
}

/**
 * A current-format record whose part stays as bytes. The byte reader accepted exactly the fields
 * its schema puts beside the part (`v` the current version, `at`, `type`, and a message's `index`
 * and `stepId`), each a non-negative integer as the schema asks; the part meets its own schema
 * when first read.
 */
export function lazyRecord(frame: Frame, bytes: Uint8Array, file: string, offset: number): StoredRecord {
  const { v, at, seq } = frame;
  const part = lazyPart(asBuffer(bytes), frame.partStart, frame.partEnd, file, offset, seq, frame.callId, frame.stepId);
  if (frame.part === 'message') return lazyMessageRecord({ v, at, type: 'message', index: frame.index, stepId: frame.stepId, seq }, part);
  return lazyLedgerRecord({ v, at, type: 'ledger', seq }, part);
}
