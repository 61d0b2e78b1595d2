import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError } from '../../../src/core/store/contract';
import type { StoreFileHandle } from '../../../src/core/store/fs-port';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import { message, runInput } from './fixtures';

/** Fails the next journal write or sync with the given code when armed. */
class FlakyFs extends NodeStoreFs {
  failNext: { op: 'write' | 'sync'; code: string } | null = null;
  private maybeFail(op: 'write' | 'sync', handle: StoreFileHandle): void {
    if (this.failNext?.op === op && handle.path.endsWith('journal.jsonl')) {
      const code = this.failNext.code;
      this.failNext = null;
      throw Object.assign(new Error(`${code}: injected`), { code });
    }
  }
  override async write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    if (this.failNext?.op === 'write' && handle.path.endsWith('journal.jsonl')) {
      await super.write(handle, bytes.subarray(0, Math.floor(bytes.length / 2)));
    }
    this.maybeFail('write', handle);
    await super.write(handle, bytes);
  }
  override async sync(handle: StoreFileHandle): Promise<void> {
    this.maybeFail('sync', handle);
    await super.sync(handle);
  }
}

describe('file store under I/O errors', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-io-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  for (const [op, code] of [
    ['write', 'ENOSPC'],
    ['sync', 'EIO'],
  ] as const) {
    it(`${code} at ${op}: the append fails as io, the writer stops, the run reopens with every acknowledged record`, async () => {
      const fs = new FlakyFs();
      const store = openFileStore(root, { fs });
      const writer = await store.createRun(runInput('r1'));
      await writer.append([message(0, 0, 'user', 'acknowledged')]);
      fs.failNext = { op, code };
      await assert.rejects(
        writer.append([message(1, 0, 'assistant', 'not acknowledged')]),
        (e: unknown) => e instanceof StoreError && e.code === 'io',
      );
      await assert.rejects(
        writer.append([message(1, 0, 'assistant', 'again')]),
        (e: unknown) => e instanceof StoreError && e.code === 'io',
      );
      const again = await store.openWriter('r1');
      const state = await store.readRun('r1');
      assert.deepEqual(
        state.messages.map((m) => (m.content as { text: string }[])[0]!.text),
        ['acknowledged'],
      );
      await again.append([message(1, 1, 'assistant', 'continued')]);
      await again.close();
      assert.equal((await store.readRun('r1')).messages.length, 2);
      assert.equal((await store.verify('r1')).ok, true);
    });
  }
});
