import type { Buffer } from 'node:buffer';
import { choices, enumAfter, intAfter, lit } from './byte-fields';
import type { Cursor } from './journal-frame';
import { ABSENT, Patch, PatchState } from '../patches/schema';
import { withLazyDiff } from './lazy-record';
import type { StoredRecord } from './records';

// A patch record read straight from its bytes, in the arrangement the writer gives it (the Patch
// schema's field order, as zod outputs it). Every field is checked here exactly as the schema
// checks it; the diff, a JSON string with escapes, is decoded by JSON.parse alone, when it is
// first read (a resume reads every patch, and no diff). A record in
// any other arrangement, or with a field this reader is not sure of (escapes in any other string,
// a negative or long number, an unknown field), is left to JSON.parse and the schema. An agent
// that edits writes one per file it changes: without this a resume parsed each through zod.

const HEAD = lit(',"type":"patch","patch":{"patchId":');
const RUN_ID = lit(',"runId":');
const STEP_ID = lit(',"stepId":');
const TOOL_CALL_ID = lit(',"toolCallId":');
const PATH = lit(',"path":');
const OP = lit(',"op":');
const BEFORE_HASH = lit(',"beforeHash":');
const AFTER_HASH = lit(',"afterHash":');
const BEFORE_BLOB = lit(',"beforeBlob":');
const AFTER_BLOB = lit(',"afterBlob":');
const DIFF = lit(',"diff":');
const ADDED = lit(',"added":');
const REMOVED = lit(',"removed":');
const BINARY = lit(',"binary":');
const CONTENT_OMITTED = lit(',"contentOmitted":');
const WROTE_DIRTY = lit(',"wroteDirtyBuffer":');
const CREATED_AT = lit(',"createdAt":');
const STATE = lit(',"state":');
const CLOSE_BOTH = lit('}}');
const TRUE = lit('true');
const FALSE = lit('false');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const OPS = choices(Patch.shape.op.options);
const STATES = choices(PatchState.options);

/** A required plain string after `key` (at least `min` characters), or undefined. */
function stringAfter(cursor: Cursor, key: Buffer, min: number): string | undefined {
  if (!cursor.literal(key)) return undefined;
  const value = cursor.plainString();
  return value !== undefined && value.length >= min ? value : undefined;
}

/** An optional boolean field: absent (undefined), present (its value) or unreadable (null). */
function optionalBoolean(cursor: Cursor, key: Buffer): boolean | undefined | null {
  if (!cursor.literal(key)) return undefined;
  return boolean(cursor) ?? null;
}

function boolean(cursor: Cursor): boolean | undefined {
  if (cursor.literal(TRUE)) return true;
  if (cursor.literal(FALSE)) return false;
  return undefined;
}

const ABSENT_STRING = lit(JSON.stringify(ABSENT));
const HASH_LENGTH = 64;

function isLowerHex(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66);
}

/** A content hash after `key` (what the schema's ContentHash accepts: ABSENT, or SHA256_HEX), checked on its bytes before it is made a string; or undefined. */
function hashAfter(cursor: Cursor, key: Buffer): string | undefined {
  if (!cursor.literal(key)) return undefined;
  if (cursor.literal(ABSENT_STRING)) return ABSENT;
  const { bytes } = cursor;
  const start = cursor.at + 1;
  if (bytes[cursor.at] !== QUOTE || start + HASH_LENGTH >= cursor.end || bytes[start + HASH_LENGTH] !== QUOTE) return undefined;
  for (let at = start; at < start + HASH_LENGTH; at++) if (!isLowerHex(bytes[at]!)) return undefined;
  cursor.at = start + HASH_LENGTH + 1;
  return bytes.toString('latin1', start, start + HASH_LENGTH);
}

/** An optional blob name after `key`; when its bytes are those of `hash` (a blob is named by its content's hash), that same string. */
function blobAfter(cursor: Cursor, key: Buffer, hash: string): string | undefined | null {
  if (!cursor.literal(key)) return undefined;
  const start = cursor.at + 1;
  if (
    hash.length === HASH_LENGTH &&
    cursor.bytes[cursor.at] === QUOTE &&
    start + HASH_LENGTH < cursor.end &&
    cursor.bytes[start + HASH_LENGTH] === QUOTE &&
    sameAscii(cursor.bytes, start, hash)
  ) {
    cursor.at = start + HASH_LENGTH + 1;
    return hash;
  }
  return cursor.plainString() ?? null;
}

function sameAscii(bytes: Buffer, start: number, text: string): boolean {
  for (let k = 0; k < text.length; k++) if (bytes[start + k] !== text.charCodeAt(k)) return false;
  return true;
}

/** Moves past a JSON string (escapes and all: its closing quote is the first one no backslash escapes); false when there is none. */
function skipJsonString(cursor: Cursor): boolean {
  const { bytes } = cursor;
  if (bytes[cursor.at] !== QUOTE) return false;
  for (let quote = bytes.indexOf(QUOTE, cursor.at + 1); quote !== -1 && quote < cursor.end; quote = bytes.indexOf(QUOTE, quote + 1)) {
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 1) continue;
    cursor.at = quote + 1;
    return true;
  }
  return false;
}

function counts(cursor: Cursor): { added: number; removed: number; binary: boolean } | undefined {
  const added = intAfter(cursor, ADDED);
  const removed = intAfter(cursor, REMOVED);
  const binary = cursor.literal(BINARY) ? boolean(cursor) : undefined;
  return added < 0 || removed < 0 || binary === undefined ? undefined : { added, removed, binary };
}

/** The patch (of record `seq`) after `"patchId":`, fields in the schema's order, or null. */
function readPatch(cursor: Cursor, seq: number): Patch | null {
  const patchId = cursor.plainString();
  const runId = stringAfter(cursor, RUN_ID, 1);
  const stepId = intAfter(cursor, STEP_ID);
  const toolCallId = stringAfter(cursor, TOOL_CALL_ID, 0);
  const path = stringAfter(cursor, PATH, 1);
  const op = enumAfter(cursor, OP, OPS);
  if (!patchId || runId === undefined || stepId < 0 || toolCallId === undefined || path === undefined || !op) return null;
  const beforeHash = hashAfter(cursor, BEFORE_HASH);
  const afterHash = hashAfter(cursor, AFTER_HASH);
  if (beforeHash === undefined || afterHash === undefined) return null;
  const beforeBlob = blobAfter(cursor, BEFORE_BLOB, beforeHash);
  const afterBlob = blobAfter(cursor, AFTER_BLOB, afterHash);
  if (beforeBlob === null || afterBlob === null || !cursor.literal(DIFF)) return null;
  const diffStart = cursor.at;
  if (!skipJsonString(cursor)) return null;
  const diffEnd = cursor.at;
  const sides = counts(cursor);
  if (!sides) return null;
  const contentOmitted = optionalBoolean(cursor, CONTENT_OMITTED);
  const wroteDirtyBuffer = optionalBoolean(cursor, WROTE_DIRTY);
  if (contentOmitted === null || wroteDirtyBuffer === null || !cursor.literal(CREATED_AT)) return null;
  const createdAt = cursor.number();
  const state = enumAfter(cursor, STATE, STATES);
  if (Number.isNaN(createdAt) || !state) return null;
  // The schema's order, optional fields only when present: what zod outputs.
  const patch: Patch = { patchId, runId, stepId, toolCallId, path, op, beforeHash, afterHash } as Patch;
  if (beforeBlob !== undefined) patch.beforeBlob = beforeBlob;
  if (afterBlob !== undefined) patch.afterBlob = afterBlob;
  withLazyDiff(patch, cursor.bytes, diffStart, diffEnd, cursor.file, cursor.lineStart, seq);
  patch.added = sides.added;
  patch.removed = sides.removed;
  patch.binary = sides.binary;
  if (contentOmitted !== undefined) patch.contentOmitted = contentOmitted;
  if (wroteDirtyBuffer !== undefined) patch.wroteDirtyBuffer = wroteDirtyBuffer;
  patch.createdAt = createdAt;
  patch.state = state;
  return patch;
}

/** The patch record (numbered `seq`) whose fields follow `{"v":v,"at":at`, or null to leave it to the schema. */
export function readPatchRecord(cursor: Cursor, v: number, at: number, seq: number): StoredRecord | null {
  if (!cursor.literal(HEAD)) return null;
  const patch = readPatch(cursor, seq);
  if (!patch || !cursor.literal(CLOSE_BOTH) || cursor.at !== cursor.end) return null;
  return { v, at, type: 'patch', patch, seq };
}
