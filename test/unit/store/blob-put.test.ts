import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../../../src/core/patches/hash';
import { FileJournalDevice } from '../../../src/core/store/file/file-device';
import type { StoreFs } from '../../../src/core/store/fs-port';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { CrashingFs, isPowerLoss } from '../../support/faults/crashing-fs';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A blob as the store reads it: refused unless its bytes match its hash. */
async function getWhole(fs: StoreFs, root: string, hash: string): Promise<Uint8Array> {
  const bytes = await new FileJournalDevice(fs, root).getBlob(hash);
  if (bytes === null || sha256Hex(bytes) !== hash) throw new Error(`blob ${hash} does not match its hash`);
  return bytes;
}

describe('blobs: written under their final name, never trusted when found there', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ac-blob-put-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const [label, torn] of [
    ['a short (torn) file', (bytes: Uint8Array) => bytes.subarray(0, 3)],
    ['a file of the right size with other bytes', (bytes: Uint8Array) => bytes.map((b) => b ^ 0xff)],
  ] as const) {
    it(`${label} under the blob's name is replaced by put`, async () => {
      const bytes = enc.encode('the content of a blob\n');
      const hash = sha256Hex(bytes);
      const device = new FileJournalDevice(new NodeStoreFs(), dir);
      await new NodeStoreFs().mkdirp(join(dir, 'blobs', hash.slice(0, 2)));
      writeFileSync(join(dir, 'blobs', hash.slice(0, 2), hash), torn(bytes));
      await assert.rejects(getWhole(new NodeStoreFs(), dir, hash), /does not match its hash/);
      await device.putBlob(hash, bytes);
      assert.equal(dec.decode(await getWhole(new NodeStoreFs(), dir, hash)), 'the content of a blob\n');
    });
  }

  it('puts of the same bytes at once store them once, whole', async () => {
    const device = new FileJournalDevice(new NodeStoreFs(), dir);
    const bytes = enc.encode('x'.repeat(100_000));
    const hash = sha256Hex(bytes);
    await Promise.all([device.putBlob(hash, bytes), device.putBlob(hash, bytes), device.putBlob(hash, bytes)]);
    assert.equal((await getWhole(new NodeStoreFs(), dir, hash)).length, 100_000);
  });

  it('power loss at every operation of a put: once put resolved the blob survives; else a later put makes it whole', async () => {
    const bytes = enc.encode('blob written straight to its name\n');
    const hash = sha256Hex(bytes);
    const setUp = async (): Promise<CrashingFs> => {
      const fs = new CrashingFs();
      await fs.mkdirp('/store/blobs');
      await fs.mkdirp('/store/runs');
      await fs.syncDir('/store');
      await fs.syncDir('/');
      return fs;
    };
    const dry = await setUp();
    const start = dry.ops;
    await new FileJournalDevice(dry, '/store').putBlob(hash, bytes);
    const putOps = dry.ops - start;
    assert.ok(putOps >= 10, `a put is ${putOps} operations`);
    // The last: no operation of the put is cut; the power goes right after it resolved.
    for (let atOp = 1; atOp <= putOps + 1; atOp++) {
      for (let seed = 1; seed <= 4; seed++) {
        const fs = await setUp();
        fs.arm({ atOp: fs.ops + atOp });
        let resolved = false;
        try {
          await new FileJournalDevice(fs, '/store').putBlob(hash, bytes);
          resolved = true;
        } catch (error) {
          if (!isPowerLoss(error)) throw error;
        }
        const { fs: after } = fs.restart(seed);
        if (resolved) assert.equal(dec.decode(await getWhole(after, '/store', hash)), dec.decode(bytes), `op ${atOp} seed ${seed}`);
        await new FileJournalDevice(after, '/store').putBlob(hash, bytes);
        assert.equal(dec.decode(await getWhole(after, '/store', hash)), dec.decode(bytes), `op ${atOp} seed ${seed}: after a second put`);
      }
    }
  });
});
