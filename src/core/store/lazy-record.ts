import type { Buffer } from 'node:buffer';
import type { z } from 'zod';
import { LedgerEntry } from '../ledger/schema';
import { MessageParam } from '../model/messages';
import { StoreError } from './contract';
import { checkedLedgerEntry } from './ledger-entry-check';
import type { LedgerRecord, MessageRecord, StoredRecord } from './records';

// Records read from a journal whose bulky part (a message, a ledger entry) stays as the bytes the
// writer wrote, already proven by the line's checksum. The part is parsed and checked against its
// schema on first read and then kept; until then nothing is allocated for it. The part is an own
// enumerable property (a getter), so spreading, JSON and deep equality see a plain record.

export interface LazyPart {
  /** The part's JSON text as written: bytes start..end of the journal (checksum verified); let go once decoded. */
  journal: Buffer | null;
  readonly start: number;
  readonly end: number;
  file: string;
  offset: number;
  seq: number;
  /** A ledger entry's callId and stepId, read from the head of the same bytes ('' and the step for a message). */
  readonly callId: string;
  readonly stepId: number;
  value: unknown;
}

/** A part of the bytes start..end of `journal`, read from `file` at line `offset`, record `seq`. */
export function lazyPart(
  journal: Buffer,
  start: number,
  end: number,
  file: string,
  offset: number,
  seq: number,
  callId: string,
  stepId: number,
): LazyPart {
  return { journal, start, end, file, offset, seq, callId, stepId, value: undefined };
}

const PART = Symbol('lazy part');
type Holder = { [PART]: LazyPart };

/** What a ledger record's entry says about itself without decoding it: the two fields a fold needs. */
export interface LedgerKey {
  readonly callId: string;
  readonly stepId: number;
}

/** A hand check that returns what the schema would, or undefined to ask the schema. */
type QuickCheck<T> = (raw: unknown) => T | undefined;

function decodePart<T>(part: LazyPart, schema: z.ZodType<T>, what: string, quick?: QuickCheck<T>): T {
  const value = parsePart(part, schema, what, quick);
  part.journal = null; // the whole journal stays in memory only while a part still needs it
  return value;
}

function parsePart<T>(part: LazyPart, schema: z.ZodType<T>, what: string, quick: QuickCheck<T> | undefined): T {
  let raw: unknown;
  try {
    raw = JSON.parse(part.journal!.toString('utf8', part.start, part.end));
  } catch (error) {
    throw new StoreError(
      `${part.file}: ${what} of record ${part.seq} at byte ${part.offset} is not JSON: ${(error as Error).message}`,
      'damaged',
      part.file,
      part.offset,
    );
  }
  const checked = quick?.(raw);
  if (checked !== undefined) return checked;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new StoreError(
      `${part.file}: ${what} of record ${part.seq} at byte ${part.offset} does not match its schema: ${parsed.error.message}`,
      'damaged',
      part.file,
      part.offset,
    );
  }
  return parsed.data;
}

/** The message of a part, parsed and checked now (a journal's message read without its record). */
export function messageOfPart(part: LazyPart): MessageParam {
  return (part.value ??= decodePart(part, MessageParam, 'message')) as MessageParam;
}

/** The ledger entry of a part, parsed and checked now. */
export function entryOfPart(part: LazyPart): LedgerEntry {
  return (part.value ??= decodePart(part, LedgerEntry, 'ledger entry', checkedLedgerEntry)) as LedgerEntry;
}

// One getter function per kind, shared by every record, so the records share their hidden class.
function messageGetter(this: Holder): MessageParam {
  return messageOfPart(this[PART]);
}

function entryGetter(this: Holder): LedgerEntry {
  return entryOfPart(this[PART]);
}

// Descriptors shared by every record: defining a property allocates nothing per record but the part.
const partDescriptor: PropertyDescriptor = { value: undefined };
const messageDescriptor: PropertyDescriptor = { get: messageGetter, enumerable: true };
const entryDescriptor: PropertyDescriptor = { get: entryGetter, enumerable: true };

function withLazyPart(record: object, name: string, descriptor: PropertyDescriptor, part: LazyPart, holder: symbol = PART): void {
  partDescriptor.value = part;
  Object.defineProperty(record, holder, partDescriptor);
  partDescriptor.value = undefined;
  Object.defineProperty(record, name, descriptor);
}

// A patch's diff (most of a patch's bytes, read only to show or undo it) is a JSON string decoded
// on first read. Like a message, it is read from the journal's bytes, which stay in memory while
// such a patch does (a resume hands its patches on and lets them go, resume.ts).
const DIFF = Symbol('lazy diff');

function diffGetter(this: { [DIFF]: LazyPart }): string {
  const part = this[DIFF];
  if (part.value === undefined) {
    let value: unknown;
    try {
      value = JSON.parse(part.journal!.toString('utf8', part.start, part.end));
    } catch (error) {
      throw new StoreError(
        `${part.file}: diff of record ${part.seq} at byte ${part.offset} is not JSON: ${(error as Error).message}`,
        'damaged',
        part.file,
        part.offset,
      );
    }
    if (typeof value !== 'string')
      throw new StoreError(
        `${part.file}: diff of record ${part.seq} at byte ${part.offset} is not a string`,
        'damaged',
        part.file,
        part.offset,
      );
    part.value = value;
    part.journal = null;
  }
  return part.value as string;
}

const diffDescriptor: PropertyDescriptor = { get: diffGetter, enumerable: true };

/** Gives `patch` its `diff` (the JSON string at bytes start..end) as a property decoded on first read. */
export function withLazyDiff(patch: object, bytes: Buffer, start: number, end: number, file: string, offset: number, seq: number): void {
  withLazyPart(patch, 'diff', diffDescriptor, lazyPart(bytes, start, end, file, offset, seq, '', 0), DIFF);
}

/** A message record whose message is decoded on first read; `head` holds the other fields (seq included), checked. */
export function lazyMessageRecord(head: Omit<MessageRecord, 'message'> & { seq: number }, part: LazyPart): StoredRecord {
  const record = head;
  withLazyPart(record, 'message', messageDescriptor, part);
  return record as StoredRecord;
}

/** A ledger record whose entry is decoded on first read; the part's `key` is read from the same bytes. */
export function lazyLedgerRecord(head: Omit<LedgerRecord, 'entry'> & { seq: number }, part: LazyPart): StoredRecord {
  const record = head;
  withLazyPart(record, 'entry', entryDescriptor, part);
  return record as StoredRecord;
}

/** callId and stepId of a ledger record, without decoding a lazy entry. */
export function ledgerKeyOf(record: LedgerRecord): LedgerKey {
  return (record as LedgerRecord & Partial<Holder>)[PART] ?? record.entry;
}

/** Decodes every lazy part now (verify); the first that fails its schema, with its byte offset. */
export function firstUndecodable(records: readonly StoredRecord[]): { offset: number; message: string } | undefined {
  for (const record of records) {
    try {
      if (record.type === 'message') void record.message;
      else if (record.type === 'ledger') void record.entry;
    } catch (error) {
      if (error instanceof StoreError && error.offset !== undefined) return { offset: error.offset, message: error.message };
      throw error;
    }
  }
  return undefined;
}
