import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError } from '../../../src/core/store/contract';
import { JournalScanner, scanJournal, type JournalScan } from '../../../src/core/store/journal-format';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore } from '../../../src/host/node/store-factory';
import { checkpoint, ledgerEntry, message, runInput } from './fixtures';

/** The scan of bytes handed over in pieces of `piece` bytes, as a port that reads in pieces hands them. */
function scanInPieces(bytes: Uint8Array, piece: number): JournalScan {
  const scanner = new JournalScanner('journal.jsonl');
  for (let filled = Math.min(piece, bytes.length); filled > 0 && filled < bytes.length; filled = Math.min(filled + piece, bytes.length)) {
    scanner.feed(bytes.subarray(0, filled));
  }
  return scanner.finish(bytes);
}

function outcome(scan: () => JournalScan): JournalScan | string {
  try {
    return scan();
  } catch (error) {
    return error instanceof StoreError ? `${error.code}: ${error.message}` : `crash: ${String(error)}`;
  }
}

async function journalOf(root: string): Promise<Buffer> {
  const store = openFileStore(root);
  const writer = await store.createRun(runInput('r1'));
  await writer.append([checkpoint('c0', 0, 'run_start', 0)]);
  await writer.append([
    message(0, 1, 'assistant', 'héllo ✓ '.repeat(40)),
    ledgerEntry('k1', 1, 'planned'),
    checkpoint('c1', 1, 'after_model', 1),
  ]);
  await writer.append([ledgerEntry('k1', 1, 'succeeded')]);
  await writer.close();
  return readFileSync(store.journalPath('r1'));
}

/** Counts whole-file reads of journals, whichever way they are read. */
class CountingReads extends NodeStoreFs {
  journalReads = 0;
  override async readFile(path: string): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.journalReads++;
    return super.readFile(path);
  }
  override async readFileInPieces(path: string, onBytes: (prefix: Uint8Array) => void): Promise<Uint8Array> {
    if (path.endsWith('journal.jsonl')) this.journalReads++;
    return super.readFileInPieces(path, onBytes);
  }
}

describe('journal read in pieces', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-pieces-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('scanning as pieces arrive gives the scan of the whole file: every piece size, every truncation, every flipped byte', async () => {
    const bytes = await journalOf(root);
    const variants: Uint8Array[] = [bytes];
    for (let length = 0; length < bytes.length; length += 7) variants.push(bytes.subarray(0, length));
    for (let at = 0; at < bytes.length; at += 5) {
      const flipped = Buffer.from(bytes);
      flipped[at] = flipped[at]! ^ 0x20;
      variants.push(flipped);
    }
    let compared = 0;
    for (const variant of variants) {
      const whole = outcome(() => scanJournal(variant, 'journal.jsonl'));
      for (const piece of [1, 2, 3, 17, 64, 211, 1000]) {
        assert.deepStrictEqual(
          outcome(() => scanInPieces(variant, piece)),
          whole,
          `piece ${piece} of a ${variant.length}-byte variant`,
        );
        compared++;
      }
    }
    assert.ok(compared > 1000, `${compared} comparisons`);
  });

  it('NodeStoreFs hands on growing prefixes of a large file, then the whole of it', async () => {
    const path = join(root, 'big.bin');
    const content = Buffer.alloc(9 * 1024 * 1024 + 123);
    for (let i = 0; i < content.length; i++) content[i] = (i * 31) & 0xff;
    writeFileSync(path, content);
    const prefixLengths: number[] = [];
    const whole = await new NodeStoreFs().readFileInPieces(path, (prefix) => {
      assert.ok(
        Buffer.from(prefix.buffer, prefix.byteOffset, prefix.length).equals(content.subarray(0, prefix.length)),
        "a prefix holds the file's bytes",
      );
      prefixLengths.push(prefix.length);
    });
    assert.ok(Buffer.from(whole).equals(content));
    assert.ok(prefixLengths.length >= 3, `${prefixLengths.length} pieces`);
    assert.deepEqual(
      [...prefixLengths].sort((a, b) => a - b),
      prefixLengths,
      'each prefix longer than the last',
    );
    assert.equal(prefixLengths[prefixLengths.length - 1], content.length);
  });

  it('NodeStoreFs: a missing file is ENOENT; an error thrown while parsing stops the read and is passed on', async () => {
    const fs = new NodeStoreFs();
    await assert.rejects(
      fs.readFileInPieces(join(root, 'missing'), () => undefined),
      (e: unknown) => (e as { code?: string }).code === 'ENOENT',
    );
    const path = join(root, 'big.bin');
    writeFileSync(path, Buffer.alloc(6 * 1024 * 1024, 0x61));
    let calls = 0;
    await assert.rejects(
      fs.readFileInPieces(path, () => {
        calls++;
        throw new Error('bad record');
      }),
      /bad record/,
    );
    assert.equal(calls, 1);
  });

  it('a resume reads the journal once: openWriter hands its records to the next readRun, until the writer appends', async () => {
    const fs = new CountingReads();
    const store = openFileStore(root, { fs });
    const created = await store.createRun(runInput('r1'));
    await created.append([checkpoint('c0', 0, 'run_start', 0), message(0, 1, 'user', 'go')]);
    await created.close();
    const reference = await openFileStore(root).readRun('r1');

    fs.journalReads = 0;
    const writer = await store.openWriter('r1');
    const resumed = await store.readRun('r1');
    assert.equal(fs.journalReads, 1, 'openWriter and readRun read the journal once between them');
    assert.deepStrictEqual(resumed.messages, reference.messages);
    assert.deepStrictEqual(resumed.checkpoints, reference.checkpoints);

    await writer.append([message(1, 1, 'assistant', 'done')]);
    const after = await store.readRun('r1');
    assert.equal(fs.journalReads, 2, 'after an append the run is read from disk again');
    assert.equal(after.messages.length, 2);
    await writer.close();
  });

  it('a journal that changed after openWriter (its lease taken over) is read again', async () => {
    const fs = new CountingReads();
    // No heartbeat timer: the first writer goes stale as a stalled one would.
    const store = openFileStore(root, { fs, leaseTimeoutMs: 1, timers: undefined });
    const created = await store.createRun(runInput('r1'));
    await created.close();
    const stale = await store.openWriter('r1');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const taker = await openFileStore(root, { leaseTimeoutMs: 1 }).openWriter('r1');
    await taker.append([message(0, 1, 'user', 'written by the new holder')]);
    fs.journalReads = 0;
    assert.equal((await store.readRun('r1')).messages.length, 1);
    assert.equal(fs.journalReads, 1);
    await taker.close();
    await stale.close().catch(() => undefined);
  });

  it('a writer that appends before readRun: readRun still sees every record', async () => {
    const store = openFileStore(root, { fs: new CountingReads() });
    const created = await store.createRun(runInput('r1'));
    await created.close();
    const writer = await store.openWriter('r1');
    await writer.append([message(0, 1, 'user', 'first')]);
    assert.equal((await store.readRun('r1')).messages.length, 1);
    await writer.close();
  });
});
