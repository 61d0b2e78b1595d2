import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileStore } from '../../../src/host/node/store-factory';
import { checkpointStoreConformance } from './conformance';

checkpointStoreConformance('file', async ({ clock, leaseTimeoutMs }) => {
  const root = mkdtempSync(join(tmpdir(), 'store-conf-'));
  return {
    open: () => openFileStore(root, { clock, leaseTimeoutMs, blobGraceMs: 60_000 }),
    dispose: async () => rmSync(root, { recursive: true, force: true }),
  };
});
