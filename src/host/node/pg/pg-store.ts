import type pg from 'pg';
import { JournalStore, type StoreOptions } from '../../../core/store/store';
import { PgJournalDevice, type PgDeviceOptions } from './pg-device';

export interface PgStoreOptions extends StoreOptions, PgDeviceOptions {}

/** The store over the PostgreSQL device: the same store as the file store's, its runs in tables (pg-schema.ts). */
export class PgCheckpointStore extends JournalStore {
  declare readonly device: PgJournalDevice;

  constructor(options: PgStoreOptions) {
    // A snapshot is a row rewritten whole: one every 4 MiB of journal, as refs are (a file's is a rename).
    super(new PgJournalDevice(options), { snapshotStepBytes: 4 << 20, ...options });
  }

  /** One query on a pooled connection (tests and tools look at the tables). */
  query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.device.query<R>(sql, params);
  }
}
