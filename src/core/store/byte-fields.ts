import type { Buffer } from 'node:buffer';
import type { Cursor } from './journal-frame';

// Field readers shared by the byte readers of records (checkpoint-bytes, patch-bytes): each reads
// one `,"key":value` at the cursor, or says it could not (and the record is left to the schema).

/** The bytes of a literal piece of JSON. */
export const lit = (text: string): Buffer => globalThis.Buffer.from(text);

/** Each allowed value with its JSON bytes: a match yields the schema's own string, no new one. */
export type Choices<T extends string> = readonly (readonly [T, Buffer])[];
export const choices = <T extends string>(options: readonly T[]): Choices<T> =>
  options.map((option) => [option, lit(JSON.stringify(option))] as const);

/** A non-negative integer after `key`, or -1. */
export function intAfter(cursor: Cursor, key: Buffer): number {
  return cursor.literal(key) ? cursor.integer() : -1;
}

/** One of `allowed` after `key`, or undefined. */
export function enumAfter<T extends string>(cursor: Cursor, key: Buffer, allowed: Choices<T>): T | undefined {
  if (!cursor.literal(key)) return undefined;
  for (const [value, bytes] of allowed) if (cursor.literal(bytes)) return value;
  return undefined;
}

/** An optional string field: absent (undefined), present (the string) or unreadable (null). */
export function optionalString(cursor: Cursor, key: Buffer): string | undefined | null {
  if (!cursor.literal(key)) return undefined;
  return cursor.plainString() ?? null;
}
