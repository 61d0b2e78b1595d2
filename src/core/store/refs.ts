import { SHA256_HEX } from '../patches/schema';
import type { StoreRecord } from './records';

export const BLOB_HASH = SHA256_HEX;

/** Blob hashes a record names: patch contents, recorded tool results, restore contents. */
export function blobRefs(record: StoreRecord): string[] {
  const refs: string[] = [];
  const add = (hash: string | undefined): void => {
    if (hash !== undefined && BLOB_HASH.test(hash)) refs.push(hash);
  };
  switch (record.type) {
    case 'patch':
      add(record.patch.beforeBlob);
      add(record.patch.afterBlob);
      break;
    case 'ledger':
      add(record.entry.resultRef);
      break;
    case 'restore':
      for (const file of record.files) {
        add(file.replacedBlob);
        add(file.writtenBlob);
      }
      break;
    default:
      break;
  }
  return refs;
}
