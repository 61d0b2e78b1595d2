import { z } from 'zod';
import { readIfExists, replaceFileAtomic } from './atomic-file';
import { crc32 } from './crc32';
import { joinPath, type StoreFs } from './fs-port';
import type { IndexedPrefix } from './journal-format';
import { LineColumns, type ColumnArrays } from './line-columns';

// The resume index: a run's line columns (line-columns.ts) as of some length of its journal, with
// the crc32 of those bytes. A resume that finds the journal's first bytes unchanged (the same
// crc, taken as the pieces arrive) takes the lines from here and reads only the lines after
// them; any mismatch, and it reads every line as if there were no index. It is a cache: written
// by the run's writer when its journal has grown by half since the last one and when it closes,
// never needed, and never trusted beyond what its checksums and a check of every column prove.

export const INDEX = 'journal.index';
const INDEX_VERSION = 2;
const NEWLINE = 0x0a;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const IndexHeader = z.object({
  v: z.literal(INDEX_VERSION),
  /** The journal format the lines were read with: another build's reader may read them otherwise. */
  readVersion: z.number().int().positive(),
  littleEndian: z.literal(true),
  lines: z.number().int().positive(),
  journalBytes: z.number().int().positive(),
  journalCrc: z.number().int().nonnegative().max(0xffffffff),
  keysBytes: z.number().int().nonnegative(),
  payloadCrc: z.number().int().nonnegative().max(0xffffffff),
});
type IndexHeader = z.infer<typeof IndexHeader>;

const Keys = z.array(z.string());

const padded = (n: number) => Math.ceil(n / 8) * 8;

/** Byte offsets of each column in the payload of an index of `lines` lines. */
function layout(lines: number) {
  const ends = padded(lines);
  const steps = ends + 8 * lines;
  const indexes = steps + 8 * lines;
  const partOffsets = indexes + 8 * lines;
  const keyIds = partOffsets + padded(4 * lines);
  const keys = keyIds + padded(4 * lines);
  return { ends, steps, indexes, partOffsets, keyIds, keys };
}

/** The index file of `columns`, which describe the first `journalBytes` bytes of a journal whose crc32 is `journalCrc`. */
export function encodeIndex(columns: LineColumns, journalBytes: number, journalCrc: number, readVersion: number): Uint8Array | null {
  if (!LITTLE_ENDIAN || columns.length === 0) return null;
  const arrays = columns.arrays();
  const lines = arrays.types.length;
  const at = layout(lines);
  const keys = new TextEncoder().encode(JSON.stringify(arrays.keys));
  const payload = new Uint8Array(at.keys + keys.length);
  payload.set(arrays.types, 0);
  payload.set(new Uint8Array(arrays.ends.buffer, arrays.ends.byteOffset, 8 * lines), at.ends);
  payload.set(new Uint8Array(arrays.steps.buffer, arrays.steps.byteOffset, 8 * lines), at.steps);
  payload.set(new Uint8Array(arrays.indexes.buffer, arrays.indexes.byteOffset, 8 * lines), at.indexes);
  payload.set(new Uint8Array(arrays.partOffsets.buffer, arrays.partOffsets.byteOffset, 4 * lines), at.partOffsets);
  payload.set(new Uint8Array(arrays.keyIds.buffer, arrays.keyIds.byteOffset, 4 * lines), at.keyIds);
  payload.set(keys, at.keys);
  const header: IndexHeader = { v: INDEX_VERSION, readVersion, littleEndian: true, lines, journalBytes, journalCrc, keysBytes: keys.length, payloadCrc: crc32(payload) };
  const head = new TextEncoder().encode(`${JSON.stringify(header)}\n`);
  const file = new Uint8Array(head.length + payload.length);
  file.set(head);
  file.set(payload, head.length);
  return file;
}

function parsedHeader(bytes: Uint8Array, newline: number): IndexHeader | null {
  try {
    const parsed = IndexHeader.safeParse(JSON.parse(new TextDecoder().decode(bytes.subarray(0, newline))));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The columns an index file holds, or null when anything in it is not what a writer of this build would write. */
export function decodeIndex(bytes: Uint8Array, readVersion: number): IndexedPrefix | null {
  const newline = bytes.indexOf(NEWLINE);
  const header = newline > 0 && LITTLE_ENDIAN ? parsedHeader(bytes, newline) : null;
  if (!header || header.readVersion !== readVersion) return null;
  const at = layout(header.lines);
  const source = bytes.subarray(newline + 1);
  if (source.length !== at.keys + header.keysBytes || crc32(source) !== header.payloadCrc) return null;
  // A copy, so that every column starts where its typed array may (a multiple of its element size).
  const payload = new Uint8Array(source.length);
  payload.set(source);
  const { buffer } = payload;
  let keys: unknown;
  try {
    keys = JSON.parse(new TextDecoder().decode(payload.subarray(at.keys)));
  } catch {
    return null;
  }
  const parsedKeys = Keys.safeParse(keys);
  if (!parsedKeys.success) return null;
  const n = header.lines;
  const arrays: ColumnArrays = {
    types: payload.subarray(0, n),
    ends: new Float64Array(buffer, at.ends, n),
    steps: new Float64Array(buffer, at.steps, n),
    indexes: new Float64Array(buffer, at.indexes, n),
    partOffsets: new Uint32Array(buffer, at.partOffsets, n),
    keyIds: new Int32Array(buffer, at.keyIds, n),
    keys: parsedKeys.data,
  };
  let columns: LineColumns;
  try {
    columns = LineColumns.restore(arrays);
  } catch {
    return null;
  }
  if (columns.endOf(n - 1) + 1 !== header.journalBytes) return null;
  return { columns, journalBytes: header.journalBytes, journalCrc: header.journalCrc };
}

/** The run's resume index, or null when there is none or it does not decode. */
export async function readIndexFile(fs: StoreFs, runDir: string, readVersion: number): Promise<IndexedPrefix | null> {
  let bytes: Uint8Array | null;
  try {
    bytes = await readIfExists(fs, joinPath(runDir, INDEX));
  } catch {
    return null;
  }
  return bytes ? decodeIndex(bytes, readVersion) : null;
}

export async function writeIndexFile(fs: StoreFs, runDir: string, bytes: Uint8Array): Promise<void> {
  await replaceFileAtomic(fs, runDir, INDEX, bytes);
}
