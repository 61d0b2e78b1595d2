// bench:pg's Keep figures: a person's Keep of one hunk (a review record and the patch's accept) on
// a run of the bench's long shape, made as the window makes it (window-store.ts): the store's
// light path (appendDecisions) where it has one, else a writer opened, appended to and closed.
// The same file runs on the store before issue 46 (no appendDecisions, no device): the journal
// reads it counts are the device's readJournal there is one, else the old store's SELECTs of
// ac_journal (its `lines` and its opening from a snapshot's rows), so both count the same thing.
import pg from 'pg';
import type { DecisionRecord, RunWriter } from '../../src/core/store/contract';
import type { StoredRecord } from '../../src/core/store/records';
import { PgCheckpointStore } from '../../src/host/node/pg/pg-store';
import { nodeProcessIdentity } from '../../src/host/node/store-factory';
import type { TestPostgres } from '../support/pg-server';

/** Keeps measured (the figure is their 95th percentile). */
export const KEEPS = 100;
/** Keeps made first and not measured: the dead builder's lease taken over, the pool and the schema's first use. */
const WARM_KEEPS = 5;
/** The run the build child writes. */
const RUN_ID = 'big';

/** What a Keep reaches of the store, on both trees. */
interface KeepStore {
  appendDecisions?(runId: string, records: readonly DecisionRecord[]): Promise<readonly StoredRecord[]>;
  openWriter(runId: string): Promise<RunWriter>;
  readonly device?: { readJournal?(runId: string, from?: number, end?: number): Promise<Uint8Array> };
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

export interface JournalReads {
  whole: number;
  partial: number;
}

/** Counts the journal reads of `store` from now on: whole (from its start to its end) or partial. */
function countJournalReads(store: KeepStore): JournalReads {
  const reads: JournalReads = { whole: 0, partial: 0 };
  const device = store.device;
  if (device?.readJournal) {
    const read = device.readJournal.bind(device);
    device.readJournal = (runId, from, end) => {
      reads[(from ?? 0) === 0 && end === undefined ? 'whole' : 'partial']++;
      return read(runId, from, end);
    };
    return reads;
  }
  // The store before the device: every journal read is one SELECT of ac_journal through its query().
  const query = store.query.bind(store);
  store.query = (sql, params) => {
    if (/^\s*SELECT[\s\S]*\bFROM\s+ac_journal\b/i.test(sql)) reads[/seq\s*>=/.test(sql) && Number(params?.[1]) > 1 ? 'partial' : 'whole']++;
    return query(sql, params);
  };
  return reads;
}

/** One Keep of the patch of step `n`'s first call (store-steps.ts names it p-tu-<n>-a; every one is pending). */
async function keep(store: KeepStore, n: number): Promise<readonly StoredRecord[]> {
  const patchId = `p-tu-${n}-a`;
  const records: DecisionRecord[] = [
    { type: 'review', decision: 'keep', hunks: [{ patchId, hunk: 0 }] },
    { type: 'patch_state', patchId, state: 'accepted', reason: 'every hunk kept in review' },
  ];
  if (store.appendDecisions) return store.appendDecisions(RUN_ID, records);
  const writer = await store.openWriter(RUN_ID);
  try {
    return await writer.append(records);
  } finally {
    await writer.close();
  }
}

const percentile95 = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(0.95 * xs.length) - 1]!;

/**
 * A run of the long shape in a database of its own on `server` (fsync on, as the appends'), built
 * by `build(url, schema)` with commits that do not wait for the disk (its writing is not measured),
 * then KEEPS keeps on it with commits that do: their p95 and the journal reads per keep.
 */
export async function keepFigures(
  server: TestPostgres,
  build: (url: string, schema: string) => void,
): Promise<{ p95: number; reads: JournalReads; path: 'appendDecisions' | 'writer' }> {
  const url = await server.newDatabase();
  const database = new URL(url).pathname.slice(1);
  const admin = new pg.Pool({ connectionString: server.url, max: 1 });
  admin.on('error', () => undefined);
  await admin.query(`ALTER DATABASE ${database} SET synchronous_commit = off`);
  build(url, 'public');
  await admin.query(`ALTER DATABASE ${database} RESET synchronous_commit`);
  await admin.end();
  const pgStore = new PgCheckpointStore({ url, schema: 'public', process: nodeProcessIdentity });
  const store: KeepStore = pgStore;
  try {
    for (let k = 0; k < WARM_KEEPS; k++) await keep(store, k + 1);
    const reads = countJournalReads(store);
    const times: number[] = [];
    for (let k = 0; k < KEEPS; k++) {
      const started = performance.now();
      const stored = await keep(store, WARM_KEEPS + k + 1);
      times.push(performance.now() - started);
      if (stored.length !== 2) throw new Error(`a keep stored ${stored.length} records`);
    }
    const perKeep = { whole: reads.whole / KEEPS, partial: reads.partial / KEEPS };
    return { p95: percentile95(times), reads: perKeep, path: store.appendDecisions ? 'appendDecisions' : 'writer' };
  } finally {
    await pgStore.dispose();
  }
}
