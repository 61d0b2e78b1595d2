import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreFileHandle } from '../../../src/core/store/fs-port';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import { ManualClock, message, runInput } from './fixtures';

/** The Node port, keeping the append handles open. */
class CountingFs extends NodeStoreFs {
  readonly appending = new Set<StoreFileHandle>();
  get open(): number {
    return this.appending.size;
  }
  override async openAppend(path: string): Promise<StoreFileHandle> {
    const handle = await super.openAppend(path);
    this.appending.add(handle);
    return handle;
  }
  override async close(handle: StoreFileHandle): Promise<void> {
    await super.close(handle);
    this.appending.delete(handle);
  }
}

describe('a file writer that loses its lease', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'writer-handle-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('closes its journal handle at once, before its owner closes it (a window may hold many such writers)', async () => {
    const clock = new ManualClock();
    const fs = new CountingFs();
    const leaseTimeoutMs = 10_000;
    const writer = await openFileStore(root, { clock, leaseTimeoutMs, fs }).createRun(runInput('r1'));
    await writer.append([message(0, 0, 'user', 'a')]);
    assert.equal(fs.open, 1);
    clock.advance(leaseTimeoutMs + 1);
    const taker = await openFileStore(root, { clock, leaseTimeoutMs }).openWriter('r1');
    await assert.rejects(writer.append([message(1, 0, 'assistant', 'lost')]), /lease/);
    assert.equal(fs.open, 0, 'the stopped writer holds no handle');
    await writer.close();
    assert.equal(fs.open, 0, 'closing it later closes nothing twice');
    await taker.close();
  });
});
