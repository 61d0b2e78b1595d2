import { MemoryCheckpointStore } from '../../support/memory-store';
import { runStoreConformance } from './conformance';

runStoreConformance('memory', async ({ clock, leaseTimeoutMs }) => {
  const store = new MemoryCheckpointStore({ clock, leaseTimeoutMs, blobGraceMs: 60_000 });
  return { open: () => store, dispose: async () => undefined };
});
