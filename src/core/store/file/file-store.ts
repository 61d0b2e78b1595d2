import type { StoreFs } from '../fs-port';
import { JournalStore, type StoreOptions } from '../store';
import { FileJournalDevice } from './file-device';

export interface FileStoreOptions extends StoreOptions {
  readonly fs: StoreFs;
  /** Folder that holds runs/ and blobs/. */
  readonly root: string;
}

/** The store over the file device: one folder per run (journal, listing row, lease, snapshots) and shared blobs. */
export class FileCheckpointStore extends JournalStore {
  declare readonly device: FileJournalDevice;
  readonly fs: StoreFs;
  readonly root: string;
  readonly runsDir: string;

  constructor(options: FileStoreOptions) {
    super(new FileJournalDevice(options.fs, options.root), options);
    this.fs = options.fs;
    this.root = options.root;
    this.runsDir = this.device.runsDir;
  }

  runDir(runId: string): string {
    return this.device.runDir(runId);
  }

  journalPath(runId: string): string {
    return this.device.journalName(runId);
  }
}
