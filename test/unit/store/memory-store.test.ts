import { MemoryVolume } from '../../support/memory-device';
import { MemoryCheckpointStore } from '../../support/memory-store';
import { runStoreConformance } from './conformance';

// Each open() is another store object over the same volume, as another process on the same store.
runStoreConformance('memory', async ({ clock, leaseTimeoutMs }) => {
  const volume = new MemoryVolume();
  return { open: () => new MemoryCheckpointStore({ volume, clock, leaseTimeoutMs, blobGraceMs: 60_000 }), dispose: async () => undefined };
});

// Every append writes a state snapshot: each test then also reads its runs through snapshots.
runStoreConformance('memory, a snapshot after every append', async ({ clock, leaseTimeoutMs }) => {
  const volume = new MemoryVolume();
  const options = { volume, clock, leaseTimeoutMs, blobGraceMs: 60_000, snapshotStepBytes: 0 };
  return { open: () => new MemoryCheckpointStore(options), dispose: async () => undefined };
});
