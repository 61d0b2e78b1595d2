import { strict as assert } from 'node:assert';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { StoreError, type RunState } from '../../../src/core/store/contract';
import type { FileCheckpointStore } from '../../../src/core/store/file-store';
import { encodeGroup } from '../../../src/core/store/journal-format';
import { decodeIndex, INDEX } from '../../../src/core/store/journal-index';
import { stampRecords } from '../../../src/core/store/stamp';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { FORMAT_VERSION, type NewRecord } from '../../../src/core/store/records';
import { openFileStore } from '../../../src/host/node/store-factory';
import { checkpoint, ledgerEntry, message, runInput } from './fixtures';

// The resume index is a cache of the journal's line columns: whatever it holds, or however it
// was cut or garbled, a run must read exactly as it reads with no index at all.

const HASH = 'a'.repeat(64);

function patch(patchId: string, stepId: number, callId: string): NewRecord {
  const diff = `--- a/f${stepId}\n+++ b/f${stepId}\n@@ -1 +1 @@\n-old "quoted" ✓\n+new\n`;
  return {
    type: 'patch',
    patch: {
      patchId,
      runId: 'r',
      stepId,
      toolCallId: callId,
      path: `src/f${stepId % 3}.ts`,
      op: 'modify',
      beforeHash: HASH,
      afterHash: 'absent',
      diff,
      added: 1,
      removed: 1,
      binary: false,
      createdAt: 5,
      state: 'pending',
    },
  };
}

/** One step as the runtime writes it, in commit groups; `branch` takes the session back to an earlier checkpoint first. */
function stepGroups(step: number, messages: number, branchTo?: string): NewRecord[][] {
  const callId = `call-${step}`;
  const groups: NewRecord[][] = [];
  if (branchTo) groups.push([{ type: 'branch', checkpointId: branchTo, branchId: `b${step}` }]);
  groups.push([checkpoint(`cp-${step}-a`, step, 'before_model', messages)]);
  groups.push([
    message(messages, step, 'assistant', `answer ${step}`),
    ledgerEntry(callId, step, 'planned'),
    checkpoint(`cp-${step}-b`, step, 'after_model', messages + 1),
  ]);
  groups.push([ledgerEntry(callId, step, 'started'), checkpoint(`cp-${step}-c`, step, 'tool_started', messages + 1)]);
  groups.push([patch(`p-${step}`, step, callId), checkpoint(`cp-${step}-d`, step, 'file_written', messages + 1)]);
  if (step % 4 === 0) groups.push([{ type: 'patch_state', patchId: `p-${step - 1}`, state: 'accepted' }]);
  if (step % 5 === 0)
    groups.push([
      { type: 'note', kind: 'info', text: `note ${step}` },
      { type: 'approval', target: callId, toolName: 'write_file', decision: 'allow_once' },
    ]);
  groups.push([
    ledgerEntry(callId, step, 'succeeded', `r${step}`),
    message(messages + 1, step, 'user', `result ${step}`),
    checkpoint(`cp-${step}-e`, step, 'tool_finished', messages + 2),
  ]);
  return groups;
}

async function writeSteps(
  store: FileCheckpointStore,
  runId: string,
  from: number,
  to: number,
  branchAt = new Set<number>(),
): Promise<void> {
  const writer = from === 1 ? await store.createRun(runInput(runId)) : await store.openWriter(runId);
  let messages = (await currentMessages(store, runId, from)) ?? 0;
  const afterModel = new Map<number, number>();
  for (let step = from; step <= to; step++) {
    const target = step - 2;
    const branch = branchAt.has(step) && afterModel.has(target) ? `cp-${target}-b` : undefined;
    if (branch) messages = afterModel.get(target)!;
    for (const group of stepGroups(step, messages, branch)) await writer.append(group);
    afterModel.set(step, messages + 1);
    messages += 2;
  }
  await writer.close();
}

async function currentMessages(store: FileCheckpointStore, runId: string, from: number): Promise<number | undefined> {
  return from === 1 ? undefined : (await store.readRun(runId)).messages.length;
}

/** Everything a state holds, the decoded-on-read fields included. */
function plain(state: RunState): unknown {
  return JSON.parse(
    JSON.stringify({ ...state, messages: state.messages, checkpoints: state.checkpoints, allCheckpoints: state.allCheckpoints }),
  );
}

async function readWithoutIndex(root: string, runId: string): Promise<unknown> {
  const dir = join(root, 'runs', runId);
  const saved = readFileSync(join(dir, INDEX));
  rmSync(join(dir, INDEX));
  try {
    return plain(await openFileStore(root).readRun(runId));
  } finally {
    writeFileSync(join(dir, INDEX), saved);
  }
}

async function scanIndex(store: FileCheckpointStore, runId: string) {
  return (await store.scanJournalOf(runId)).index;
}

describe('resume index', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-index-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a closed run reads the same from its index as line by line, branches, patch states and all', async () => {
    const store = openFileStore(root, { indexStepBytes: 0 });
    await writeSteps(store, 'r', 1, 12, new Set([6, 9]));
    assert.ok(existsSync(join(root, 'runs', 'r', INDEX)));
    assert.equal(await scanIndex(store, 'r'), 'used');
    const fromIndex = plain(await openFileStore(root).readRun('r'));
    assert.deepEqual(fromIndex, await readWithoutIndex(root, 'r'));
    const atCheckpoint = await openFileStore(root).readRun('r', { atCheckpoint: 'cp-7-c' });
    assert.equal(atCheckpoint.latestCheckpoint?.checkpointId, 'cp-7-c');
    assert.deepEqual((await openFileStore(root).readRecords('r')).length, (await openFileStore(root).verify('r')).records);
  });

  it('a journal that grew after its index (a crash before the next one) reads its new lines too', async () => {
    const store = openFileStore(root, { indexStepBytes: 0 });
    await writeSteps(store, 'r', 1, 6);
    const index = readFileSync(join(root, 'runs', 'r', INDEX));
    await writeSteps(store, 'r', 7, 10);
    writeFileSync(join(root, 'runs', 'r', INDEX), index); // the index of step 6, as a crash would leave it
    assert.equal(await scanIndex(store, 'r'), 'used');
    const state = await openFileStore(root).readRun('r');
    assert.equal(state.stepId, 10);
    assert.deepEqual(plain(state), await readWithoutIndex(root, 'r'));
  });

  it('small journals get no index; a writer appends a segment each time its journal grew by a step, never rewriting the rest', async () => {
    await writeSteps(openFileStore(root), 'small', 1, 3);
    assert.equal(existsSync(join(root, 'runs', 'small', INDEX)), false);
    const store = openFileStore(root, { indexStepBytes: 4096 });
    const writer = await store.createRun(runInput('grows'));
    const file = join(root, 'runs', 'grows', INDEX);
    const sizes: number[] = [];
    for (let step = 1; step <= 30; step++) {
      for (const group of stepGroups(step, 2 * (step - 1))) await writer.append(group);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (existsSync(file)) sizes.push(statSync(file).size);
    }
    await writer.close();
    const journal = statSync(store.journalPath('grows')).size;
    const index = decodeIndex(readFileSync(file), FORMAT_VERSION)!;
    assert.ok(index.boundaries.length >= journal / 4096 / 2, `${index.boundaries.length} segments for ${journal} bytes`);
    assert.equal(index.boundaries.at(-1)!.journalBytes, journal, 'the last segment, written at close, covers the whole journal');
    assert.deepEqual(
      sizes,
      [...sizes].sort((a, b) => a - b),
      'the index only grows',
    );
    assert.ok(statSync(file).size < journal / 4, `index ${statSync(file).size} bytes for a ${journal}-byte journal`);
    assert.equal(await scanIndex(store, 'grows'), 'used');
  });

  it('a segment cut short at the end of the index: the segments before it are used, and the next writer cuts it and carries on', async () => {
    const store = openFileStore(root, { indexStepBytes: 0 });
    await writeSteps(store, 'r', 1, 4);
    const file = join(root, 'runs', 'r', INDEX);
    const whole = readFileSync(file);
    const segments = decodeIndex(whole, FORMAT_VERSION)!.boundaries;
    // The last segment that brought new keys (callIds, patchIds), cut short, and nothing after it.
    const cut = segments.map((segment, k) => (k > 0 && segment.keys > segments[k - 1]!.keys ? k : -1)).reduce((a, b) => Math.max(a, b));
    writeFileSync(file, whole.subarray(0, segments[cut]!.fileBytes - 7));
    const scan = await store.scanJournalOf('r');
    assert.equal(scan.index, 'used');
    assert.equal(scan.indexFile.bytes, segments[cut - 1]!.fileBytes);
    assert.equal(scan.indexFile.keys, segments[cut - 1]!.keys);
    assert.deepEqual(plain(await openFileStore(root).readRun('r')), await readWithoutIndex(root, 'r'));
    await writeSteps(store, 'r', 5, 6);
    const after = decodeIndex(readFileSync(file), FORMAT_VERSION)!;
    assert.equal(after.boundaries.at(-1)!.journalBytes, statSync(store.journalPath('r')).size);
    assert.deepEqual(plain(await openFileStore(root).readRun('r')), await readWithoutIndex(root, 'r'));
  });

  it('a changed byte anywhere before the index end: the index is not used and the damage is found as without one', async () => {
    const store = openFileStore(root, { indexStepBytes: 0 });
    await writeSteps(store, 'r', 1, 3);
    const file = store.journalPath('r');
    const original = readFileSync(file);
    for (let at = 0; at < original.length; at += 97) {
      const bytes = Buffer.from(original);
      bytes[at] = bytes[at]! ^ 0x04;
      writeFileSync(file, bytes);
      const withIndex = await openFileStore(root)
        .readRun('r')
        .then(plain, (error: unknown) => error);
      rmSync(join(root, 'runs', 'r', 'damage.json'), { force: true });
      const index = readFileSync(join(root, 'runs', 'r', INDEX));
      rmSync(join(root, 'runs', 'r', INDEX));
      const without = await openFileStore(root)
        .readRun('r')
        .then(plain, (error: unknown) => error);
      rmSync(join(root, 'runs', 'r', 'damage.json'), { force: true });
      writeFileSync(join(root, 'runs', 'r', INDEX), index);
      if (without instanceof StoreError) {
        assert.ok(withIndex instanceof StoreError, `byte ${at}: read with the index although the journal is damaged`);
        assert.equal(withIndex.offset, without.offset, `byte ${at}`);
      } else {
        assert.deepEqual(withIndex, without, `byte ${at}`);
      }
    }
  });

  it('a journal cut below its index end (a torn tail cut): the segments it still holds are used, the rest read line by line', async () => {
    const store = openFileStore(root, { indexStepBytes: 0 });
    await writeSteps(store, 'r', 1, 4);
    const file = store.journalPath('r');
    truncateSync(file, statSync(file).size - 10);
    const scan = await store.scanJournalOf('r');
    assert.equal(scan.index, 'used');
    assert.ok(scan.indexedBytes < statSync(file).size);
    const state = await openFileStore(root).readRun('r');
    assert.equal(state.stepId, 4);
    assert.deepEqual(plain(state), await readWithoutIndex(root, 'r'));
  });

  it('any byte of the index changed, or the index cut anywhere: never a crash, always the same state', async () => {
    const store = openFileStore(root, { indexStepBytes: 0 });
    await writeSteps(store, 'r', 1, 2);
    const indexFile = join(root, 'runs', 'r', INDEX);
    const original = readFileSync(indexFile);
    const expected = await readWithoutIndex(root, 'r');
    const used = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.nat(original.length - 1), fc.integer({ min: 1, max: 255 }), fc.boolean(), async (at, flip, cut) => {
        const bytes = cut ? original.subarray(0, at) : Buffer.from(original).fill(original[at]! ^ flip, at, at + 1);
        writeFileSync(indexFile, bytes);
        used.add(await scanIndex(openFileStore(root), 'r'));
        assert.deepEqual(plain(await openFileStore(root).readRun('r')), expected);
      }),
      { numRuns: 300 },
    );
    assert.ok(used.has('used') && used.size > 1, `both whole segments used and a garbled index set aside: ${[...used].join(', ')}`);
  });

  it('a run of more lines than a slice: its index is written in several segments, and a resume that lets the event loop run between slices reads it as one that does not', async () => {
    const store = openFileStore(root);
    await (await store.createRun(runInput('long'))).close();
    let seq = 2;
    const groups: Uint8Array[] = [];
    for (let step = 1; step <= 2000; step++) {
      for (const group of stepGroups(step, 2 * (step - 1))) {
        const stamped = stampRecords(group, seq, 5);
        seq += stamped.length;
        groups.push(encodeGroup(stamped));
      }
    }
    appendFileSync(store.journalPath('long'), Buffer.concat(groups));
    assert.ok(seq > 20_000, `${seq} lines`);
    await (await store.openWriter('long')).close();
    const index = readFileSync(join(root, 'runs', 'long', INDEX));
    assert.ok(index.toString('latin1').split('{"v":3,').length - 1 >= 2, 'the index is in slices');
    assert.equal(decodeIndex(index, FORMAT_VERSION)?.columns.length, seq - 1);
    let pauses = 0;
    const fs = new (class extends NodeStoreFs {
      override yieldToEventLoop(): Promise<void> {
        pauses += 1;
        return super.yieldToEventLoop();
      }
    })();
    const sliced = plain(await openFileStore(root, { fs }).readRun('long'));
    assert.ok(pauses >= 4, `${pauses} pauses`);
    assert.deepEqual(sliced, await readWithoutIndex(root, 'long'));
  });

  it('verify reads every line itself, whatever the index says', async () => {
    const store = openFileStore(root, { indexStepBytes: 0 });
    await writeSteps(store, 'r', 1, 3);
    const report = await store.verify('r');
    assert.equal(report.ok, true);
    assert.equal(report.records, (await store.readRecords('r')).length);
  });
});
