import { z } from 'zod';
import { readIfExists } from './atomic-file';
import { crc32 } from './crc32';
import { joinPath, type StoreFs } from './fs-port';
import { resumeLines } from './journal-log';
import { LineColumns, type ColumnArrays } from './line-columns';
import { drain, inSlices, SLICE, type Sliced } from './slices';

// The resume index: a run's line columns (line-columns.ts), appended in segments as its journal
// grows. Each segment holds the columns of the lines since the one before, the journal's length
// and crc32 at its end, and a checksum of its own. A resume that finds the journal's first bytes
// unchanged up to a segment's end (the crc, taken as the pieces arrive) takes every line up to
// there from here and reads only the lines after it; any mismatch, and it reads them as if there
// were no index. It is a cache: never needed, never fsynced, never trusted beyond what its
// checksums and a check of every column prove.

export const INDEX = 'journal.index';
const INDEX_VERSION = 3;
const NEWLINE = 0x0a;
const TAB = 0x09;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const SegmentHeader = z.object({
  v: z.literal(INDEX_VERSION),
  /** The journal format the lines were read with: another build's reader may read them otherwise. */
  readVersion: z.number().int().positive(),
  littleEndian: z.literal(true),
  fromLine: z.number().int().nonnegative(),
  lines: z.number().int().positive(),
  fromKey: z.number().int().nonnegative(),
  keysBytes: z.number().int().nonnegative(),
  journalBytes: z.number().int().positive(),
  /** Only on a span's last segment: the crc of the journal up to journalBytes, which a resume checks before it uses any line up to there. */
  journalCrc: z.number().int().nonnegative().max(0xffffffff).optional(),
});
type SegmentHeader = z.infer<typeof SegmentHeader>;

const Keys = z.array(z.string());

/** Where the index stops being good for a journal: a segment's end. */
export interface IndexBoundary {
  readonly lines: number;
  readonly journalBytes: number;
  readonly journalCrc: number;
  /** The keys the columns hold up to here. */
  readonly keys: number;
  /** The index file's length up to the end of this segment. */
  readonly fileBytes: number;
}

/** What a resume index says of a journal's first bytes: the columns, where each span of segments ends, and the lines every resume decodes (resumeLines). */
export interface IndexedPrefix {
  readonly columns: LineColumns;
  readonly boundaries: readonly IndexBoundary[];
  readonly resumeLines: readonly number[];
}

const padded = (n: number) => Math.ceil(n / 8) * 8;

/** Byte offsets of each column in the payload of a segment of `lines` lines. */
function layout(lines: number) {
  const ends = padded(lines);
  const steps = ends + 8 * lines;
  const indexes = steps + 8 * lines;
  const partOffsets = indexes + 8 * lines;
  const keyIds = partOffsets + padded(4 * lines);
  const keys = keyIds + padded(4 * lines);
  return { ends, steps, indexes, partOffsets, keyIds, keys };
}

const bytesOf = (array: ArrayBufferView) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** Lines fromLine..toLine of some columns and their keys fromKey..toKey, ending at `journalBytes` of a journal whose first bytes have crc32 `journalCrc`. */
export interface SegmentSpan {
  readonly fromLine: number;
  readonly toLine: number;
  readonly fromKey: number;
  readonly toKey: number;
  readonly journalBytes: number;
  readonly journalCrc: number | undefined;
}

/** One past the largest key a line of fromLine..toLine uses (keys are numbered in the order lines first use them). */
function keysUpTo(columns: LineColumns, fromLine: number, toLine: number, fromKey: number): number {
  let keys = fromKey;
  for (let i = fromLine; i < toLine; i++) keys = Math.max(keys, columns.keyIdAt(i) + 1);
  return keys;
}

/**
 * The bytes of a span of `columns` as segments of at most SLICE lines, so that a resume decodes
 * them a slice at a time; only the last carries the journal's crc. Lines and keys already in
 * `columns` never change, so a span taken earlier still reads the same. Null when it holds no line.
 */
export function encodeSegments(columns: LineColumns, span: SegmentSpan, readVersion: number): Uint8Array | null {
  const segments: Uint8Array[] = [];
  for (let fromLine = span.fromLine, fromKey = span.fromKey; fromLine < span.toLine;) {
    const toLine = Math.min(span.toLine, fromLine + SLICE);
    const last = toLine === span.toLine;
    const toKey = last ? span.toKey : keysUpTo(columns, fromLine, toLine, fromKey);
    const journalBytes = last ? span.journalBytes : columns.endOf(toLine - 1) + 1;
    const segment = encodeSegment(
      columns,
      { fromLine, toLine, fromKey, toKey, journalBytes, journalCrc: last ? span.journalCrc : undefined },
      readVersion,
    );
    if (!segment) return null;
    segments.push(segment);
    fromLine = toLine;
    fromKey = toKey;
  }
  if (segments.length === 0) return null;
  const bytes = new Uint8Array(segments.reduce((n, s) => n + s.length, 0));
  segments.reduce((at, s) => (bytes.set(s, at), at + s.length), 0);
  return bytes;
}

function encodeSegment(columns: LineColumns, span: SegmentSpan, readVersion: number): Uint8Array | null {
  const { fromLine, toLine, fromKey, toKey, journalBytes, journalCrc } = span;
  const all = columns.arrays();
  const lines = toLine - fromLine;
  if (!LITTLE_ENDIAN || lines <= 0 || toLine > all.types.length || toKey > all.keys.length) return null;
  const at = layout(lines);
  const keys = encoder.encode(JSON.stringify(all.keys.slice(fromKey, toKey)));
  const payload = new Uint8Array(at.keys + keys.length);
  payload.set(all.types.subarray(fromLine, toLine), 0);
  payload.set(bytesOf(all.ends.subarray(fromLine, toLine)), at.ends);
  payload.set(bytesOf(all.steps.subarray(fromLine, toLine)), at.steps);
  payload.set(bytesOf(all.indexes.subarray(fromLine, toLine)), at.indexes);
  payload.set(bytesOf(all.partOffsets.subarray(fromLine, toLine)), at.partOffsets);
  payload.set(bytesOf(all.keyIds.subarray(fromLine, toLine)), at.keyIds);
  payload.set(keys, at.keys);
  const header: SegmentHeader = {
    v: INDEX_VERSION,
    readVersion,
    littleEndian: true,
    fromLine,
    lines,
    fromKey,
    keysBytes: keys.length,
    journalBytes,
    ...(journalCrc !== undefined ? { journalCrc } : {}),
  };
  const json = encoder.encode(JSON.stringify(header));
  // One checksum for the header and the payload: `<header>\t<crc of both, 8 hex>\n<payload>`.
  const crc = crc32(payload, crc32(json));
  const head = encoder.encode(`\t${crc.toString(16).padStart(8, '0')}\n`);
  const segment = new Uint8Array(json.length + head.length + payload.length);
  segment.set(json);
  segment.set(head, json.length);
  segment.set(payload, json.length + head.length);
  return segment;
}

interface Segment {
  readonly header: SegmentHeader;
  readonly payload: Uint8Array;
  readonly keys: readonly string[];
  readonly end: number;
}

/** The segment at `at`, or null when it is not whole and sound. */
function segmentAt(bytes: Uint8Array, at: number, readVersion: number): Segment | null {
  const newline = bytes.indexOf(NEWLINE, at);
  const tab = newline - 9;
  if (newline < 0 || tab <= at || bytes[tab] !== TAB) return null;
  let header: SegmentHeader;
  try {
    const parsed = SegmentHeader.safeParse(JSON.parse(decoder.decode(bytes.subarray(at, tab))));
    if (!parsed.success || parsed.data.readVersion !== readVersion) return null;
    header = parsed.data;
  } catch {
    return null;
  }
  const stated = Number.parseInt(decoder.decode(bytes.subarray(tab + 1, newline)), 16);
  const end = newline + 1 + layout(header.lines).keys + header.keysBytes;
  if (end > bytes.length) return null;
  const payload = bytes.subarray(newline + 1, end);
  if (crc32(payload, crc32(bytes.subarray(at, tab))) !== stated) return null;
  const keys = Keys.safeParse(JSON.parse(decoder.decode(payload.subarray(layout(header.lines).keys))));
  return keys.success ? { header, payload, keys: keys.data, end } : null;
}

/** The sound segments from the file's start, each following on from the one before. */
function* segmentsOf(bytes: Uint8Array, readVersion: number): Sliced<Segment[]> {
  const segments: Segment[] = [];
  let lines = 0;
  let keys = 0;
  let journalBytes = 0;
  let sliceEnd = SLICE;
  for (let at = 0; at < bytes.length;) {
    if (lines >= sliceEnd) {
      sliceEnd = lines + SLICE;
      yield;
    }
    const segment = segmentAt(bytes, at, readVersion);
    const h = segment?.header;
    if (!segment || !h || h.fromLine !== lines || h.fromKey !== keys || h.journalBytes <= journalBytes) break;
    segments.push(segment);
    lines += h.lines;
    keys += segment.keys.length;
    journalBytes = h.journalBytes;
    at = segment.end;
  }
  return segments;
}

/** The columns of all segments as one set of arrays (copied, so each starts where its typed array may). */
function joined(segments: readonly Segment[]): ColumnArrays {
  const n = segments.reduce((sum, s) => sum + s.header.lines, 0);
  const arrays = {
    types: new Uint8Array(n),
    ends: new Float64Array(n),
    steps: new Float64Array(n),
    indexes: new Float64Array(n),
    partOffsets: new Uint32Array(n),
    keyIds: new Int32Array(n),
  };
  const keys: string[] = [];
  for (const { header, payload, keys: segmentKeys } of segments) {
    const at = layout(header.lines);
    const line = header.fromLine;
    // A copy (new Uint8Array of a view copies; a Buffer's slice would not), aligned for its typed array.
    const part = (offset: number, bytes: number) => new Uint8Array(payload.subarray(offset, offset + bytes)).buffer;
    arrays.types.set(payload.subarray(0, header.lines), line);
    arrays.ends.set(new Float64Array(part(at.ends, 8 * header.lines)), line);
    arrays.steps.set(new Float64Array(part(at.steps, 8 * header.lines)), line);
    arrays.indexes.set(new Float64Array(part(at.indexes, 8 * header.lines)), line);
    arrays.partOffsets.set(new Uint32Array(part(at.partOffsets, 4 * header.lines)), line);
    arrays.keyIds.set(new Int32Array(part(at.keyIds, 4 * header.lines)), line);
    for (const key of segmentKeys) keys.push(key);
  }
  return { ...arrays, keys };
}

/** What an index file holds, or null when not even its first segment is what a writer of this build writes. */
function* decoding(bytes: Uint8Array, readVersion: number): Sliced<IndexedPrefix | null> {
  if (!LITTLE_ENDIAN) return null;
  let segments: Segment[];
  let columns: LineColumns;
  try {
    segments = yield* segmentsOf(bytes, readVersion);
    if (segments.length === 0) return null;
    columns = yield* LineColumns.restoring(joined(segments));
  } catch {
    return null;
  }
  const boundaries: IndexBoundary[] = [];
  for (const { header, keys, end } of segments) {
    const lines = header.fromLine + header.lines;
    if (columns.endOf(lines - 1) + 1 !== header.journalBytes) return null;
    if (header.journalCrc !== undefined)
      boundaries.push({
        lines,
        keys: header.fromKey + keys.length,
        journalBytes: header.journalBytes,
        journalCrc: header.journalCrc,
        fileBytes: end,
      });
  }
  if (boundaries.length === 0) return null;
  return { columns, boundaries, resumeLines: yield* resumeLines(columns) };
}

/** What an index file holds, decoded at once (see decoding). */
export function decodeIndex(bytes: Uint8Array, readVersion: number): IndexedPrefix | null {
  return drain(decoding(bytes, readVersion));
}

/**
 * Appends `segment` to the run's index after its first `validBytes` bytes (whatever follows them,
 * a segment cut short or one no resume used, goes). Returns false, writing nothing, when the
 * file is shorter than that. Not fsynced: a segment lost to a crash costs a resume only the time
 * to read those lines.
 */
export async function appendSegment(fs: StoreFs, runDir: string, validBytes: number, segment: Uint8Array): Promise<boolean> {
  const path = joinPath(runDir, INDEX);
  const handle = await fs.openAppend(path);
  try {
    const size = await fs.size(handle);
    if (size < validBytes) return false;
    if (size > validBytes) await fs.truncate(path, validBytes);
    await fs.write(handle, segment);
    return true;
  } finally {
    await fs.close(handle);
  }
}

/** The run's resume index, or null when there is none or it does not decode. */
export async function readIndexFile(fs: StoreFs, runDir: string, readVersion: number): Promise<IndexedPrefix | null> {
  let bytes: Uint8Array | null;
  try {
    bytes = await readIfExists(fs, joinPath(runDir, INDEX));
  } catch {
    return null;
  }
  return bytes ? inSlices(decoding(bytes, readVersion), fs.yieldToEventLoop?.bind(fs)) : null;
}
