import type { StoredRecord } from '../../src/core/store/records';
import { tokensOfText } from './fake-anthropic/cache';

/** Tokens of every message the run produced, once: the copies a compaction writes are not counted. */
export function rawHistoryTokens(records: readonly StoredRecord[]): number {
  let inCompaction = false;
  let tokens = 0;
  for (const r of records) {
    if (r.type === 'compaction') inCompaction = true;
    else if (r.type === 'checkpoint') inCompaction = false;
    else if (r.type === 'message' && !inCompaction) tokens += tokensOfText(JSON.stringify(r.message));
  }
  return tokens;
}
