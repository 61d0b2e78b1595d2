import { strict as assert } from 'node:assert';
import { StoreError, type LeaseInfo } from '../../../src/core/store/contract';
import { encodeGroup } from '../../../src/core/store/journal-format';
import { startFold, type FoldState } from '../../../src/core/store/fold';
import { newLease, unknownProcess } from '../../../src/core/store/lease-policy';
import type { NewRecord, StoredRecord } from '../../../src/core/store/records';
import { StoreRunWriter, type AppendGroup, type WriterDevice } from '../../../src/core/store/run-writer';
import { stampRecords } from '../../../src/core/store/stamp';
import { checkpoint, ManualClock, message, runInput } from './fixtures';

// The one run writer over a scripted device: what it asks of a device (fencing, the snapshot
// cadence, what a failure stops) whatever the device is. Each device's own primitives are
// proven by the store suite run per device (file, memory, PostgreSQL).

/** A device that keeps groups in memory and fails where a test tells it to. */
class ScriptedDevice implements WriterDevice {
  readonly clock = new ManualClock(1_000);
  readonly timers = undefined;
  readonly leaseTimeoutMs = 15_000;
  readonly snapshotStepBytes: number;
  readonly groups: (readonly StoredRecord[])[] = [];
  readonly snapshots: number[] = [];
  readonly cuts: number[] = [];
  generation = 0;
  fail: { append?: Error; blobs?: Error; renew?: Error; snapshot?: Error } = {};
  abandoned = false;
  closed = 0;
  released = false;
  reopened = 0;

  constructor(snapshotStepBytes = 1 << 30) {
    this.snapshotStepBytes = snapshotStepBytes;
  }

  async missingBlobs(): Promise<readonly string[]> {
    if (this.fail.blobs) throw this.fail.blobs;
    return [];
  }
  async appendGroup({ records, now }: AppendGroup, lease: LeaseInfo): Promise<LeaseInfo> {
    this.fence(lease);
    if (this.fail.append) throw this.fail.append;
    this.groups.push(records);
    return { ...lease, renewedAt: now };
  }
  async renewLease(lease: LeaseInfo): Promise<LeaseInfo> {
    this.fence(lease);
    if (this.fail.renew) throw this.fail.renew;
    return { ...lease, renewedAt: this.clock.now() };
  }
  private fence(lease: LeaseInfo): void {
    if (lease.generation !== this.generation) throw new StoreError('taken over', 'lease_lost');
  }
  async appended(): Promise<void> {}
  async putSnapshot(_fold: FoldState, { journalBytes }: { journalBytes: number }): Promise<number | null> {
    if (this.fail.snapshot) throw this.fail.snapshot;
    this.snapshots.push(journalBytes);
    return 0;
  }
  async reopen(): Promise<FoldState> {
    this.reopened++;
    return startFold(stampRecords([{ ...runInput('r1'), type: 'run' }], 1, 0)[0]);
  }
  async release(): Promise<void> {
    this.released = true;
  }
  async cutBack(journalBytes: number): Promise<void> {
    this.cuts.push(journalBytes);
  }
  abandon(): void {
    this.abandoned = true;
  }
  async closeHandle(): Promise<void> {
    this.closed++;
  }
  ioError(error: unknown): StoreError {
    return new StoreError(String(error), 'io');
  }
}

function writerOver(device: ScriptedDevice): StoreRunWriter {
  const [run] = stampRecords([{ ...runInput('r1'), type: 'run' }], 1, 0);
  const start = { fold: startFold(run), lastSeq: 1, journalBytes: 100, snapshotAt: 0 };
  return new StoreRunWriter(device, 'r1', 'h1', newLease('h1', 0, unknownProcess, 0), start);
}

const isCode = (code: StoreError['code']) => (e: unknown) => e instanceof StoreError && e.code === code;

describe('the one run writer over a device', () => {
  it('numbers groups after the last record and hands each to the device in call order', async () => {
    const device = new ScriptedDevice();
    const writer = writerOver(device);
    const [a, b] = await Promise.all([
      writer.append([message(0, 1, 'user', 'hi')]),
      writer.append([checkpoint('c1', 1, 'before_model', 1)]),
    ]);
    assert.deepEqual([a![0]!.seq, b![0]!.seq], [2, 3]);
    assert.deepEqual(
      device.groups.map((g) => g.map((r) => r.seq)),
      [[2], [3]],
    );
  });

  it('a fenced lease: the append lands nothing, the writer stops for good and lets go of its handle, its holder not abandoned', async () => {
    const device = new ScriptedDevice();
    const writer = writerOver(device);
    device.generation = 1;
    await assert.rejects(writer.append([message(0, 1, 'user', 'hi')]), isCode('lease_lost'));
    device.generation = 0;
    await assert.rejects(writer.append([message(0, 1, 'user', 'again')]), isCode('lease_lost'));
    await assert.rejects(writer.renewLease(), isCode('lease_lost'));
    assert.equal(device.groups.length, 0);
    assert.equal(device.closed, 1);
    assert.equal(device.abandoned, false);
  });

  it('a failed write stops the writer, cuts the journal back to its last known end and abandons the holder', async () => {
    const device = new ScriptedDevice();
    const writer = writerOver(device);
    await writer.append([message(0, 1, 'user', 'hi')]);
    const end = 100 + encodeGroup(device.groups[0]!).length;
    device.fail.append = new Error('EIO');
    await assert.rejects(writer.append([message(1, 1, 'assistant', 'there')]), isCode('io'));
    assert.deepEqual(device.cuts, [end], 'cut to the end after the first group');
    assert.equal(device.abandoned, true);
    device.fail = {};
    await assert.rejects(writer.append([message(1, 1, 'assistant', 'there')]), isCode('io'));
  });

  it('a failed renewal stops the writer only when the device names it its own failure (a server gone), not on a raw file error', async () => {
    const files = new ScriptedDevice();
    const fileWriter = writerOver(files);
    files.fail.renew = new Error('EIO');
    await assert.rejects(fileWriter.renewLease(), isCode('io'));
    files.fail = {};
    await fileWriter.append([message(0, 1, 'user', 'still writing')]);
    const server = new ScriptedDevice();
    const serverWriter = writerOver(server);
    server.fail.renew = new StoreError('PostgreSQL at postgres://db: connection reset', 'io');
    await assert.rejects(serverWriter.renewLease(), isCode('io'));
    server.fail = {};
    await assert.rejects(serverWriter.append([message(0, 1, 'user', 'no')]), isCode('io'));
    assert.equal(server.abandoned, true);
  });

  it('snapshots at a step of journal and at a compaction; a failed one leaves the writer appending; close writes one after 64 KiB', async () => {
    const device = new ScriptedDevice(200);
    const writer = writerOver(device);
    await writer.append([message(0, 1, 'user', 'x'.repeat(150))]);
    assert.equal(device.snapshots.length, 1, 'past the step');
    const compaction: NewRecord = {
      type: 'compaction',
      stepId: 1,
      kind: 'summary',
      tokensBefore: 10,
      tokensAfter: 5,
      contextBudget: 100,
      messagesBefore: 1,
      messagesAfter: 0,
      clearedCallIds: [],
    };
    await writer.append([compaction]);
    assert.equal(device.snapshots.length, 2, 'at a compaction');
    device.fail.snapshot = new Error('ENOSPC');
    await writer.append([message(0, 1, 'user', 'y'.repeat(300))]);
    device.fail = {};
    await writer.append([message(1, 1, 'assistant', 'z'.repeat(64 << 10))]);
    assert.equal(device.snapshots.length, 3);
    await writer.close();
    assert.equal(device.snapshots.length, 3, 'nothing after the newest');
    assert.equal(device.released, true);
    await assert.rejects(writer.append([message(2, 1, 'user', 'closed')]), isCode('lease_lost'));
    const quiet = new ScriptedDevice();
    const closing = writerOver(quiet);
    await closing.append([message(0, 1, 'user', 'w'.repeat(64 << 10))]);
    assert.equal(quiet.snapshots.length, 0);
    await closing.close();
    assert.equal(quiet.snapshots.length, 1, 'at close, after 64 KiB');
  });

  it('a branch record the fold cannot take alone: the run is read again once the group is durable', async () => {
    const device = new ScriptedDevice();
    const writer = writerOver(device);
    await writer.append([checkpoint('c1', 1, 'before_model', 0)]);
    await writer.append([{ type: 'branch', checkpointId: 'c1', branchId: 'b1' }]);
    assert.equal(device.groups.length, 2);
    assert.equal(device.reopened, 1);
  });
});
