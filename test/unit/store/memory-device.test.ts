import { MemoryJournalDevice, MemoryVolume } from '../../support/memory-device';
import { runDeviceConformance } from './device-conformance';

// other() is another device object on the same volume, as another process on the same store.
runDeviceConformance('memory', async () => {
  const volume = new MemoryVolume();
  return { device: new MemoryJournalDevice(volume), other: () => new MemoryJournalDevice(volume), close: async () => undefined };
});
