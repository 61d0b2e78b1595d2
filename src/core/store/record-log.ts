import type { LedgerEntry } from '../ledger/schema';
import type { MessageParam } from '../model/messages';
import type { Patch } from '../patches/schema';
import { ledgerKeyOf } from './lazy-record';
import type { StoredRecord } from './records';

/**
 * A run's records in journal order, as materialise folds them. A fold asks each record only for
 * its type and the keys it folds by (a message's index, a ledger entry's callId, a stepId); a
 * whole record, message, entry or patch is asked for only when the state keeps it. A journal
 * read from disk answers those questions from its bytes (journal-log.ts) without building a
 * record for every line; the memory store answers them from its array (ArrayLog).
 */
export interface RecordLog {
  readonly length: number;
  typeAt(i: number): StoredRecord['type'];
  seqAt(i: number): number;
  record(i: number): StoredRecord;
  /** A message's, checkpoint's or ledger entry's stepId. */
  stepIdAt(i: number): number;
  /** A message's position in the active history. */
  messageIndexAt(i: number): number;
  /** A ledger entry's callId. */
  callIdAt(i: number): string;
  /** A patch record's patchId. */
  patchIdAt(i: number): string;
  messageAt(i: number): MessageParam;
  ledgerEntryAt(i: number): LedgerEntry;
  patchAt(i: number): Patch;
}

/** A RecordLog over records in memory. */
export class ArrayLog implements RecordLog {
  constructor(private readonly records: readonly StoredRecord[]) {}

  get length(): number {
    return this.records.length;
  }

  typeAt(i: number): StoredRecord['type'] {
    return this.records[i]!.type;
  }

  seqAt(i: number): number {
    return this.records[i]!.seq;
  }

  record(i: number): StoredRecord {
    return this.records[i]!;
  }

  stepIdAt(i: number): number {
    const record = this.records[i]!;
    if (record.type === 'ledger') return ledgerKeyOf(record).stepId;
    return record.type === 'message' || record.type === 'checkpoint' ? record.stepId : 0;
  }

  messageIndexAt(i: number): number {
    const record = this.records[i]!;
    return record.type === 'message' ? record.index : -1;
  }

  callIdAt(i: number): string {
    const record = this.records[i]!;
    return record.type === 'ledger' ? ledgerKeyOf(record).callId : '';
  }

  patchIdAt(i: number): string {
    const record = this.records[i]!;
    return record.type === 'patch' ? record.patch.patchId : '';
  }

  messageAt(i: number): MessageParam {
    return (this.records[i] as Extract<StoredRecord, { type: 'message' }>).message;
  }

  ledgerEntryAt(i: number): LedgerEntry {
    return (this.records[i] as Extract<StoredRecord, { type: 'ledger' }>).entry;
  }

  patchAt(i: number): Patch {
    return (this.records[i] as Extract<StoredRecord, { type: 'patch' }>).patch;
  }
}
