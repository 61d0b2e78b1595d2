import { strict as assert } from 'node:assert';
import { StoreError, type LeaseInfo } from '../../../src/core/store/contract';
import type { DeviceGroup, LeaseRead, NewListingRow } from '../../../src/core/store/device';
import type { NewRecord } from '../../../src/core/store/records';
import { JournalStore } from '../../../src/core/store/store';
import { MemoryJournalDevice } from '../../support/memory-device';
import { checkpoint, ManualClock, message, runInput } from './fixtures';

// The one run writer over a journal device: what it asks of any device (fencing, the snapshot
// cadence, what a failure stops), over the memory device with failures where a test puts them.
// Each device's own primitives are proven by the device suite run per device (file, memory,
// PostgreSQL), and the store by the store suite run per device.

/** The memory device, counting what the writer asks of it and failing where a test tells it to. */
class FailingDevice extends MemoryJournalDevice {
  fail: { append?: Error; renew?: Error; snapshot?: Error } = {};
  readonly cuts: number[] = [];
  readonly groups: number[][] = [];
  closed = 0;

  override async appendGroup(runId: string, group: DeviceGroup, lease: LeaseInfo, listing?: NewListingRow): Promise<LeaseInfo> {
    if (this.fail.append) {
      await super.readLease(runId); // fails after reaching the device, as a write that broke would
      throw this.fail.append;
    }
    const held = await super.appendGroup(runId, group, lease, listing);
    const lines = new TextDecoder().decode(group.bytes).split('\n').slice(0, -1);
    this.groups.push(lines.map((_, i) => group.firstSeq + i));
    return held;
  }
  override async swapLease(runId: string, expected: LeaseRead, next: LeaseInfo | null): Promise<boolean> {
    const renewal = expected.kind === 'held' && next?.holderId === expected.lease.holderId;
    if (renewal && this.fail.renew) throw this.fail.renew;
    return super.swapLease(runId, expected, next);
  }
  override async putDoc(runId: string, name: string, bytes: Uint8Array): Promise<void> {
    if (name.startsWith('snapshot-') && this.fail.snapshot) throw this.fail.snapshot;
    return super.putDoc(runId, name, bytes);
  }
  override async truncateJournal(runId: string, length: number): Promise<void> {
    this.cuts.push(length);
    return super.truncateJournal(runId, length);
  }
  override async closeJournal(): Promise<void> {
    this.closed++;
  }
  async snapshots(): Promise<number> {
    return (await this.listDocs('r1', 'snapshot-')).length;
  }
}

async function writerOver(snapshotStepBytes = 1 << 30) {
  const device = new FailingDevice(undefined, new ManualClock(1_000));
  const store = new JournalStore(device, { clock: new ManualClock(1_000), snapshotStepBytes });
  const writer = await store.createRun(runInput('r1'));
  return { device, store, writer };
}

const isCode = (code: StoreError['code']) => (e: unknown) => e instanceof StoreError && e.code === code;

describe('the one run writer over a device', () => {
  it('numbers groups after the last record and hands each to the device in call order', async () => {
    const { device, writer } = await writerOver();
    const [a, b] = await Promise.all([
      writer.append([message(0, 1, 'user', 'hi')]),
      writer.append([checkpoint('c1', 1, 'before_model', 1)]),
    ]);
    assert.deepEqual([a![0]!.seq, b![0]!.seq], [2, 3]);
    assert.deepEqual(device.groups, [[2], [3]]);
  });

  it('a fenced lease: the append lands nothing, the writer stops for good and lets go of its handle, its holder not abandoned', async () => {
    const { device, store, writer } = await writerOver();
    await store.fenceLease('r1');
    const size = await device.journalSize('r1');
    await assert.rejects(writer.append([message(0, 1, 'user', 'hi')]), isCode('lease_lost'));
    await assert.rejects(writer.append([message(0, 1, 'user', 'again')]), isCode('lease_lost'));
    await assert.rejects(writer.renewLease(), isCode('lease_lost'));
    assert.equal(await device.journalSize('r1'), size);
    assert.equal(device.closed, 1);
    assert.equal(store.abandoned.has(writer.holderId), false);
  });

  it('a failed write stops the writer, cuts the journal back to its last known end and abandons the holder', async () => {
    const { device, store, writer } = await writerOver();
    await writer.append([message(0, 1, 'user', 'hi')]);
    const end = await device.journalSize('r1');
    device.fail.append = new Error('EIO');
    await assert.rejects(writer.append([message(1, 1, 'assistant', 'there')]), isCode('io'));
    assert.deepEqual(device.cuts, [end], 'cut to the end after the first group');
    assert.equal(store.abandoned.has(writer.holderId), true);
    device.fail = {};
    await assert.rejects(writer.append([message(1, 1, 'assistant', 'there')]), isCode('io'));
    // This process knows the holder is gone: the run opens again at once.
    await (await store.openWriter('r1')).close();
  });

  it("a failed renewal stops the writer only when it is the device's own failure (a server gone), not on a raw file error", async () => {
    const files = await writerOver();
    files.device.fail.renew = new Error('EIO');
    await assert.rejects(files.writer.renewLease(), isCode('io'));
    files.device.fail = {};
    await files.writer.append([message(0, 1, 'user', 'still writing')]);
    const server = await writerOver();
    server.device.fail.renew = new StoreError('PostgreSQL at postgres://db: connection reset', 'io');
    await assert.rejects(server.writer.renewLease(), isCode('io'));
    server.device.fail = {};
    await assert.rejects(server.writer.append([message(0, 1, 'user', 'no')]), isCode('io'));
    assert.equal(server.store.abandoned.has(server.writer.holderId), true);
  });

  it('snapshots at a step of journal and at a compaction; a failed one leaves the writer appending; close writes one after 64 KiB', async () => {
    const { device, writer } = await writerOver(200);
    await writer.append([message(0, 1, 'user', 'x'.repeat(150))]);
    assert.equal(await device.snapshots(), 1, 'past the step');
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
    assert.equal(await device.snapshots(), 2, 'at a compaction');
    device.fail.snapshot = new Error('ENOSPC');
    await writer.append([message(0, 1, 'user', 'y'.repeat(300))]);
    device.fail = {};
    const before = await device.listDocs('r1', 'snapshot-');
    await writer.append([message(1, 1, 'assistant', 'z'.repeat(64 << 10))]);
    const after = await device.listDocs('r1', 'snapshot-');
    assert.notDeepEqual(after, before, 'the next step of journal writes one');
    await writer.close();
    assert.deepEqual(await device.listDocs('r1', 'snapshot-'), after, 'nothing after the newest');
    assert.equal((await device.readLease('r1')).kind, 'none', 'released');
    await assert.rejects(writer.append([message(2, 1, 'user', 'closed')]), isCode('lease_lost'));
    const quiet = await writerOver();
    await quiet.writer.append([message(0, 1, 'user', 'w'.repeat(64 << 10))]);
    assert.equal(await quiet.device.snapshots(), 0);
    await quiet.writer.close();
    assert.equal(await quiet.device.snapshots(), 1, 'at close, after 64 KiB');
  });

  it('a branch record the fold cannot take alone: the run is read again once the group is durable, and its listing row follows', async () => {
    const { device, store, writer } = await writerOver();
    await writer.append([checkpoint('c1', 1, 'before_model', 0)]);
    await writer.append([message(0, 1, 'user', 'first try')]);
    await writer.append([{ type: 'branch', checkpointId: 'c1', branchId: 'b1' }]);
    assert.equal(device.groups.length, 3);
    const next = await writer.append([message(0, 1, 'user', 'second try')]);
    assert.equal(next[0]!.seq, 5);
    await writer.close();
    const row = await device.readListing('r1');
    assert.equal(row?.lastSeq, 5);
    assert.equal(row?.journalBytes, await device.journalSize('r1'));
    const state = await store.readResumeState('r1');
    assert.deepEqual(state.messages.map((m) => JSON.stringify(m.content)).join(), JSON.stringify([{ type: 'text', text: 'second try' }]));
  });
});
