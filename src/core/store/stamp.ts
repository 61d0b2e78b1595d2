import { StoreError } from './contract';
import { FORMAT_VERSION, StoreRecord, type NewRecord, type StoredRecord } from './records';

/**
 * Validates new records through the zod schemas (which also drops any field the schema does
 * not know, such as a stray apiKey) and gives them version, time and sequence numbers.
 */
export function stampRecords(records: readonly NewRecord[], firstSeq: number, now: number): StoredRecord[] {
  return records.map((record, i) => {
    if (record.type === 'run' && firstSeq + i !== 1) throw new StoreError('a run record may only start a journal', 'invalid');
    const parsed = StoreRecord.safeParse({ ...record, v: FORMAT_VERSION, at: now });
    if (!parsed.success) {
      throw new StoreError(`invalid ${String(record.type)} record: ${parsed.error.message}`, 'invalid');
    }
    return { ...parsed.data, seq: firstSeq + i };
  });
}
