import { StoreError } from '../../../core/store/contract';
import { parseJsonAs } from '../../../core/store/atomic-file';
import { ListingRow, type NewListingRow } from '../../../core/store/device';
import { readLine } from '../../../core/store/journal-format';
import { FORMAT_VERSION } from '../../../core/store/records';

// Rows of the PostgreSQL journal device (pg-device.ts) and what they are made from and into.

/** A listing row as stored (its JSON with the format version) and the columns a claim reads of it: json, task, status, updated_at, workspace_key. */
export function listingParams(row: NewListingRow): [string, string, string, number, string | null] {
  return [JSON.stringify({ v: FORMAT_VERSION, ...row }), row.task, row.status, row.updatedAt, row.workspace ?? null];
}

/** SQL that sets those columns of ac_runs to listingParams at $first on (a row that names no workspace keeps its key). */
export function setListing(first: number): string {
  const $ = (i: number) => `$${first + i}`;
  return `listing = ${$(0)}, task = ${$(1)}, status = ${$(2)}, updated_at = ${$(3)}, workspace_key = coalesce(${$(4)}, workspace_key)`;
}

/** A stored listing row; null when there is none, it does not parse, or a newer build wrote it. */
export function parseListing(text: string | null): ListingRow | null {
  const row = text === null ? null : parseJsonAs(Buffer.from(text), ListingRow);
  return row && row.v <= FORMAT_VERSION ? row : null;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Whole journal lines as rows: each line's text (without its newline), byte offset in `bytes` and seq (its `s`, when asked). */
export function rowsOf(bytes: Uint8Array, journal: string, withSeq = false): { lines: string[]; offsets: number[]; seqs: number[] } {
  const rows = { lines: [] as string[], offsets: [] as number[], seqs: [] as number[] };
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a) throw new StoreError(`${journal}: a group must be whole lines`, 'invalid');
  for (let start = 0; start < bytes.length;) {
    const nl = bytes.indexOf(0x0a, start);
    const seq = withSeq ? readLine(bytes, start, nl)?.s : 0;
    if (seq === undefined) throw new StoreError(`${journal}: byte ${start} does not begin a journal line that holds`, 'invalid');
    try {
      rows.lines.push(decoder.decode(bytes.subarray(start, nl)));
    } catch {
      throw new StoreError(`${journal}: the line at byte ${start} is not UTF-8`, 'invalid');
    }
    rows.offsets.push(start);
    rows.seqs.push(seq);
    start = nl + 1;
  }
  return rows;
}

/** The bytes from..end of rows read in journal order, the first beginning at byte `base`. */
export function sliceOfRows(lines: readonly string[], base: number, from: number, end: number | undefined): Uint8Array {
  const bytes = Buffer.from(lines.length === 0 ? '' : `${lines.join('\n')}\n`, 'utf8');
  const start = Math.max(0, from - base);
  return plainBytes(bytes.subarray(start, end === undefined ? bytes.length : Math.max(start, end - base)));
}

/** A Buffer the driver gave as a plain Uint8Array over the same memory (no copy: a journal range or a document can be megabytes). */
export const plainBytes = (bytes: Buffer): Uint8Array => new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
