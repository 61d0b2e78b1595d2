import { StoreError } from './contract';
import { crc32 } from './crc32';
import { MIGRATIONS, type MigrationTable } from './migrations';
import { asBuffer, readFrame } from './journal-frame';
import { JournalLog } from './journal-log';
import type { IndexedPrefix } from './journal-index';
import { FORMAT_VERSION, type StoredRecord } from './records';

// One record a line: {"s":<seq>,"b":<first seq of its commit group>,"e":<last seq of the group>,
// "r":<record>,"c":"<crc32>"}. The crc covers every byte of the line before `,"c":`.
// A commit group is all-or-nothing. A torn write (power lost before the group's fsync) leaves a
// prefix of the group's bytes: lines that hold but do not close the group, then maybe a last line
// without its newline. Those are cut. A complete line (it ends with a newline) whose checksum fails
// is damage wherever it is, the last group included: its bytes cannot be told from an acknowledged
// group's, so nothing proves it may be dropped.

const encoder = new TextEncoder();
const NEWLINE = 0x0a;

function hex8(value: number): string {
  return value.toString(16).padStart(8, '0');
}

/** The record as written: without its seq; a message record's message, a ledger record's entry last (journal-frame reads them so). */
function recordBody(stored: StoredRecord): Record<string, unknown> {
  const { seq: _seq, ...record } = stored;
  if (record.type === 'message') {
    const { v, at, type, index, stepId, message, ...rest } = record;
    return { v, at, type, index, stepId, ...rest, message };
  }
  if (record.type === 'ledger') {
    const { v, at, type, entry, ...rest } = record;
    const { callId, stepId, ...fields } = entry;
    return { v, at, type, ...rest, entry: { callId, stepId, ...fields } };
  }
  return record;
}

/** The bytes of one commit group, ready to append. */
export function encodeGroup(records: readonly StoredRecord[]): Uint8Array {
  const first = records[0]?.seq ?? 0;
  const last = records[records.length - 1]?.seq ?? 0;
  const lines = records.map((stored) => {
    const head = encoder.encode(`{"s":${stored.seq},"b":${first},"e":${last},"r":${JSON.stringify(recordBody(stored))}`);
    const tail = encoder.encode(`,"c":"${hex8(crc32(head))}"}\n`);
    const line = new Uint8Array(head.length + tail.length);
    line.set(head);
    line.set(tail, head.length);
    return line;
  });
  const out = new Uint8Array(lines.reduce((n, l) => n + l.length, 0));
  let at = 0;
  for (const line of lines) {
    out.set(line, at);
    at += line.length;
  }
  return out;
}

export interface JournalScan {
  /** The records of every complete commit group. */
  readonly log: JournalLog;
  /** Byte length of the good part: the end of the last complete commit group. */
  readonly goodLength: number;
  /** Bytes after goodLength that a writer cuts: the lines of an unclosed commit group and a last line without its newline. */
  readonly tornTail?: { offset: number; bytes: number };
  /** A complete line that does not hold (checksum, sequence, schema): the journal cannot be written as it is. */
  readonly damage?: { offset: number; message: string };
  /** crc32 of the bytes before goodLength (what a resume index of them records). */
  readonly crc: number;
  /** The resume index offered: used (its prefix unchanged), rejected (read every line instead), or none. */
  readonly index: 'used' | 'rejected' | 'none';
  /** The bytes whose lines came from the index (0 unless used). */
  readonly indexedBytes: number;
  /** The part of the index file that was used: up to the end of its last segment that held (zeros unless used). */
  readonly indexFile: { readonly bytes: number; readonly lines: number; readonly keys: number };
}

/**
 * Reads a journal as its bytes arrive: `feed` reads every whole line of the bytes read so far
 * (each call a longer view of the same file), so a caller can parse while the next piece is read;
 * `finish` judges the end once the whole file is there. Every line is checked (checksum, sequence,
 * version, schema). An unclosed last commit group whose lines hold, ending maybe in a line without
 * its newline, is a torn tail; any complete line that does not hold is damage. Throws StoreError('future_version') for a checksum-valid record it cannot read.
 */
export class JournalScanner {
  private log: JournalLog;
  /** The index offered, until the bytes it covers have been read and checked. */
  private pending: IndexedPrefix | undefined;
  /** The index's segments whose ends were checked: the last that held, and the next to check. */
  private held = -1;
  private nextBoundary = 0;
  private indexFile: JournalScan['indexFile'] = { bytes: 0, lines: 0, keys: 0 };
  /** The index's lines, whose resume records are decoded as their bytes arrive: used only if the crc then holds. */
  private ahead: { log: JournalLog; lines: readonly number[]; next: number } | undefined;
  private index: JournalScan['index'];
  /** crc32 of the bytes before crcEnd. */
  private crc = 0;
  private crcEnd = 0;
  private indexedBytes = 0;
  private groupRecords = 0;
  private goodLength = 0;
  private start = 0;
  private badAt = -1;
  private damage: { offset: number; message: string } | undefined;

  constructor(
    private readonly file: string,
    private readonly migrations: MigrationTable = MIGRATIONS,
    private readonly readVersion = FORMAT_VERSION,
    indexed?: IndexedPrefix,
  ) {
    this.log = new JournalLog(file, migrations, readVersion);
    this.pending = indexed;
    this.index = indexed ? 'rejected' : 'none';
  }

  /** Reads the whole lines of `bytes` not read yet; `bytes` starts at the file's first byte. */
  feed(bytes: Uint8Array): void {
    if (this.badAt !== -1 || this.damage) return;
    if (this.pending && !this.settleIndex(bytes)) return;
    const { log } = this;
    log.setBytes(asBuffer(bytes));
    for (let nl = bytes.indexOf(NEWLINE, this.start); nl !== -1; nl = bytes.indexOf(NEWLINE, this.start)) {
      const frame = readFrame(bytes, this.start, nl, 'scan', this.file);
      if (!frame) {
        this.badAt = this.start;
        return;
      }
      if (frame.seq !== log.length + 1 || frame.groupFirst !== this.groupRecords + 1) {
        const message = `sequence ${frame.seq} (group from ${frame.groupFirst}) where ${log.length + 1} (group from ${this.groupRecords + 1}) was expected`;
        this.damage = { offset: this.start, message };
        return;
      }
      try {
        log.add(frame, this.start, nl);
      } catch (error) {
        if (error instanceof StoreError && error.code !== 'future_version') {
          this.damage = { offset: this.start, message: error.message };
          return;
        }
        throw error;
      }
      this.start = nl + 1;
      if (frame.closesGroup) {
        this.groupRecords = log.length;
        this.goodLength = this.start;
      }
    }
    this.crcUpTo(bytes, this.goodLength);
  }

  /**
   * While the bytes an index covers are still arriving, only their crc is taken (false: nothing
   * more to do yet), and the records a resume reads decoded ahead. Each segment's end is checked
   * as the bytes reach it: the lines up to the last segment whose crc held are the scan's, the
   * lines after it are read one by one.
   */
  private settleIndex(bytes: Uint8Array): boolean {
    const indexed = this.pending!;
    const { boundaries } = indexed;
    while (this.nextBoundary < boundaries.length) {
      const boundary = boundaries[this.nextBoundary]!;
      const reach = Math.min(bytes.length, boundary.journalBytes);
      this.crcUpTo(bytes, reach);
      this.decodeAhead(indexed, bytes, reach);
      if (reach < boundary.journalBytes) return false;
      if (this.crc !== boundary.journalCrc) break;
      this.held = this.nextBoundary++;
    }
    this.adoptIndex();
    return true;
  }

  /** Takes the index's lines up to the last segment that held (none held: every line is read). */
  private adoptIndex(): void {
    const indexed = this.pending!;
    const boundary = indexed.boundaries[this.held];
    if (!boundary || !this.ahead) return this.dropIndex();
    this.pending = undefined;
    this.index = 'used';
    this.log = this.ahead.log;
    this.ahead = undefined;
    this.log.truncate(boundary.lines, boundary.keys);
    this.groupRecords = boundary.lines;
    this.start = this.goodLength = this.indexedBytes = boundary.journalBytes;
    // The crc was taken up to the segment that failed, if one did: it is this segment's own, proven.
    this.crc = boundary.journalCrc;
    this.crcEnd = boundary.journalBytes;
    this.indexFile = { bytes: boundary.fileBytes, lines: boundary.lines, keys: boundary.keys };
  }

  /** Decodes the records a resume reads whose lines end before `end`, while the next piece is read. */
  private decodeAhead(indexed: IndexedPrefix, bytes: Uint8Array, end: number): void {
    const ahead = (this.ahead ??= {
      log: new JournalLog(this.file, this.migrations, this.readVersion, indexed.columns),
      lines: indexed.resumeLines,
      next: 0,
    });
    ahead.log.setBytes(asBuffer(bytes));
    const { lines, log } = ahead;
    while (ahead.next < lines.length && indexed.columns.endOf(lines[ahead.next]!) < end) log.prefetch(lines[ahead.next++]!);
  }

  private dropIndex(): void {
    this.pending = undefined;
    this.ahead = undefined;
    this.crc = 0;
    this.crcEnd = 0;
  }

  private crcUpTo(bytes: Uint8Array, end: number): void {
    if (end <= this.crcEnd) return;
    this.crc = crc32(bytes.subarray(this.crcEnd, end), this.crc);
    this.crcEnd = end;
  }

  /** The scan of the whole file: `bytes` is all of it (what was fed, and any rest). */
  finish(bytes: Uint8Array): JournalScan {
    // A journal shorter than its index was cut (a torn tail) after the index was written: its lines up to the last segment that held are used.
    if (this.pending && this.badAt === -1 && !this.damage) {
      this.settleIndex(bytes);
      if (this.pending) this.adoptIndex();
    }
    this.feed(bytes);
    const { goodLength, log } = this;
    log.setBytes(asBuffer(bytes));
    log.truncate(this.groupRecords);
    this.crcUpTo(bytes, goodLength);
    const scan = { log, goodLength, crc: this.crc, index: this.index, indexedBytes: this.indexedBytes, indexFile: this.indexFile };
    if (this.damage) return { ...scan, damage: this.damage };
    if (this.badAt !== -1)
      return { ...scan, damage: { offset: this.badAt, message: 'a complete line (it ends with a newline) does not match its checksum' } };
    // A last line that holds once its last byte is dropped is complete: its newline was changed, not lost.
    if (this.start < bytes.length && readFrame(bytes, this.start, bytes.length - 1)) {
      return { ...scan, damage: { offset: this.start, message: 'the last line ends in a byte that is not its newline' } };
    }
    if (goodLength === bytes.length) return scan;
    return { ...scan, tornTail: { offset: goodLength, bytes: bytes.length - goodLength } };
  }
}

/** Reads a whole journal at once (JournalScanner). */
export function scanJournal(
  bytes: Uint8Array,
  file: string,
  migrations: MigrationTable = MIGRATIONS,
  readVersion = FORMAT_VERSION,
): JournalScan {
  return new JournalScanner(file, migrations, readVersion).finish(bytes);
}
