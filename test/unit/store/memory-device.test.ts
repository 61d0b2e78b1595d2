import { strict as assert } from 'node:assert';
import { sha256Hex } from '../../../src/core/patches/hash';
import type { JournalDevice } from '../../../src/core/store/device';
import { FORMAT_VERSION } from '../../../src/core/store/records';
import { MemoryJournalDevice, MemoryVolume } from '../../support/memory-device';
import { runDeviceConformance } from './device-conformance';
import { concat, firstGroup, group, held, lease, listing } from './device-fixtures';

// other() is another device object on the same volume, as another process on the same store.
runDeviceConformance('memory', async () => {
  const volume = new MemoryVolume();
  return { device: new MemoryJournalDevice(volume), other: () => new MemoryJournalDevice(volume), close: async () => undefined };
});

describe('the memory device: what the conformance suite leaves to it', () => {
  it('keeps copies of the bytes it is given: a caller that changes them after changes nothing stored', async () => {
    const d: JournalDevice = new MemoryJournalDevice();
    const [first, more, doc, tail, blob] = [
      firstGroup('r1'),
      group(2, 2),
      new Uint8Array([1, 2]),
      new Uint8Array([3]),
      new Uint8Array([4]),
    ];
    const kept = [first, more, doc, tail, blob].map((bytes) => bytes.slice());
    await d.createRun('r1', first, listing('r1'), lease('a', 1));
    await d.appendGroup('r1', { bytes: more, at: first.length, firstSeq: 2 }, lease('a', 1));
    await d.putDoc('r1', 'snap', doc, true);
    await d.appendDoc('r1', 'log', tail);
    await d.putBlob(sha256Hex(blob), blob);
    for (const bytes of [first, more, doc, tail, blob]) bytes.fill(0);
    assert.deepEqual(await d.readJournal('r1'), concat(kept[0]!, kept[1]!));
    assert.deepEqual(await d.getDoc('r1', 'snap'), kept[2]);
    assert.deepEqual(await d.getDoc('r1', 'log'), kept[3]);
    assert.deepEqual(await d.getBlob(sha256Hex(kept[4]!)), kept[4]);
  });

  it('reads a released lease as none with its generation, and refuses a swap that read an older none', async () => {
    const d = new MemoryJournalDevice();
    await d.createRun('r1', firstGroup('r1'), listing('r1'), null);
    const before = await d.readLease('r1');
    assert.deepEqual(before, { kind: 'none' });
    assert.equal(await d.swapLease('r1', before, lease('a', 4)), true);
    assert.equal(await d.swapLease('r1', held(lease('a', 4)), null), true);
    assert.deepEqual(await d.readLease('r1'), { kind: 'none', generation: 4 });
    assert.equal(await d.swapLease('r1', { kind: 'none', generation: 3 }, lease('b', 4)), false);
    assert.equal(await d.swapLease('r1', { kind: 'none', generation: 4 }, lease('b', 5)), true);
  });

  it('reads a listing row of a newer format, or one that does not parse, as none', async () => {
    const volume = new MemoryVolume();
    const d = new MemoryJournalDevice(volume);
    await d.createRun('r1', firstGroup('r1'), listing('r1'), null);
    const run = volume.runs.get('r1')!;
    run.listing = new TextEncoder().encode(JSON.stringify({ v: FORMAT_VERSION + 1, ...listing('r1') }));
    assert.equal(await d.readListing('r1'), null);
    assert.equal((await d.listRuns())[0]!.listing, null);
    run.listing = new TextEncoder().encode('{"v":1,');
    assert.equal(await d.readListing('r1'), null);
  });

  it('tells a closed watch nothing', async () => {
    const volume = new MemoryVolume();
    const told: string[] = [];
    new MemoryJournalDevice(volume).watch('appends', (runId) => told.push(runId)).close();
    const open = new Promise<string>((resolve) => new MemoryJournalDevice(volume).watch('appends', resolve));
    await new MemoryJournalDevice(volume).createRun('r1', firstGroup('r1'), listing('r1'), null);
    assert.equal(await open, 'r1');
    assert.deepEqual(told, []);
  });
});
