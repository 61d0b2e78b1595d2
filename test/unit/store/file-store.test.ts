import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileStore } from '../../../src/host/node/store-factory';
import { runStoreConformance } from './conformance';

runStoreConformance('file', async ({ clock, leaseTimeoutMs }) => {
  const root = mkdtempSync(join(tmpdir(), 'store-conf-'));
  return {
    open: () => openFileStore(root, { clock, leaseTimeoutMs, blobGraceMs: 60_000 }),
    dispose: async () => rmSync(root, { recursive: true, force: true }),
  };
});

// Every append writes a state snapshot: each test then also reads its runs through snapshots.
runStoreConformance('file, a snapshot after every append', async ({ clock, leaseTimeoutMs }) => {
  const root = mkdtempSync(join(tmpdir(), 'store-conf-'));
  return {
    open: () => openFileStore(root, { clock, leaseTimeoutMs, blobGraceMs: 60_000, snapshotStepBytes: 0 }),
    dispose: async () => rmSync(root, { recursive: true, force: true }),
  };
});
