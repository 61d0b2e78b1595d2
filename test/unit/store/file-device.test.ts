import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileJournalDevice } from '../../../src/core/store/file/file-device';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { runDeviceConformance } from './device-conformance';

// The device suite on the file device, on the real file system: other() is another device object
// on the same folder, as another process on the same store.
runDeviceConformance('files', async () => {
  const root = mkdtempSync(join(tmpdir(), 'ac-file-device-')).replace(/\\/g, '/');
  const fs = new NodeStoreFs();
  const opened: FileJournalDevice[] = [];
  const open = () => opened[opened.push(new FileJournalDevice(fs, root)) - 1]!;
  return {
    device: open(),
    other: open,
    close: async () => {
      for (const device of opened) await device.dispose();
      rmSync(root, { recursive: true, force: true });
    },
  };
});
