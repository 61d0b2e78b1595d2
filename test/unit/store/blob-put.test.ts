import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../../../src/core/patches/hash';
import { FileBlobs } from '../../../src/core/store/file/file-blobs';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { CrashingFs, isPowerLoss } from '../../support/faults/crashing-fs';

const enc = new TextEncoder();
const dec = new TextDecoder();

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
      const blobs = new FileBlobs(new NodeStoreFs(), join(dir, 'blobs'));
      await new NodeStoreFs().mkdirp(join(dir, 'blobs', hash.slice(0, 2)));
      writeFileSync(blobs.pathOf(hash), torn(bytes));
      await assert.rejects(blobs.get(hash), /does not match its hash/);
      assert.equal(await blobs.put(bytes), hash);
      assert.equal(dec.decode(await new FileBlobs(new NodeStoreFs(), join(dir, 'blobs')).get(hash)), 'the content of a blob\n');
    });
  }

  it('puts of the same bytes at once store them once, whole', async () => {
    const blobs = new FileBlobs(new NodeStoreFs(), join(dir, 'blobs'));
    const bytes = enc.encode('x'.repeat(100_000));
    const hashes = await Promise.all([blobs.put(bytes), blobs.put(bytes), blobs.put(bytes)]);
    assert.deepEqual(new Set(hashes), new Set([sha256Hex(bytes)]));
    assert.equal((await new FileBlobs(new NodeStoreFs(), join(dir, 'blobs')).get(hashes[0]!)).length, 100_000);
  });

  it('power loss at every operation of a put: once put resolved the blob survives; else a later put makes it whole', async () => {
    const bytes = enc.encode('blob written straight to its name\n');
    const hash = sha256Hex(bytes);
    for (let atOp = 1; atOp <= 12; atOp++) {
      for (let seed = 1; seed <= 4; seed++) {
        const fs = new CrashingFs();
        await fs.mkdirp('/store/blobs');
        await fs.syncDir('/store');
        await fs.syncDir('/');
        fs.arm({ atOp: fs.ops + atOp });
        let resolved = false;
        try {
          await new FileBlobs(fs, '/store/blobs').put(bytes);
          resolved = true;
        } catch (error) {
          if (!isPowerLoss(error)) throw error;
        }
        const { fs: after } = fs.restart(seed);
        const reopened = new FileBlobs(after, '/store/blobs');
        if (resolved) assert.equal(dec.decode(await reopened.get(hash)), dec.decode(bytes), `op ${atOp} seed ${seed}`);
        assert.equal(await reopened.put(bytes), hash);
        assert.equal(dec.decode(await reopened.get(hash)), dec.decode(bytes), `op ${atOp} seed ${seed}: after a second put`);
      }
    }
  });
});
