import { JournalStore, type StoreOptions } from '../../src/core/store/store';
import { MemoryJournalDevice, type MemoryVolume } from './memory-device';

export interface MemoryStoreOptions extends StoreOptions {
  /** The storage to open (several stores on one volume are several processes on one store); a fresh one when absent. */
  readonly volume?: MemoryVolume;
}

/** The one store (JournalStore) over the memory device: a fast store for the tests, with the file store's semantics. */
export class MemoryCheckpointStore extends JournalStore {
  declare readonly device: MemoryJournalDevice;

  constructor(options: MemoryStoreOptions = {}) {
    super(new MemoryJournalDevice(options.volume, options.clock), options);
  }
}
