import { strict as assert } from 'node:assert';
import type { JournalDevice } from '../../../src/core/store/device';
import type { LeaseInfo } from '../../../src/core/store/lease-policy';
import { storageCases } from './device-conformance-storage';
import {
  concat,
  firstGroup,
  group,
  held,
  heldLease,
  isStoreError,
  lease,
  listing,
  sameBytes,
  T0,
  type DeviceCase,
  type DeviceFactory,
  type DeviceUnderTest,
} from './device-fixtures';

// The journal device port's contract (src/core/store/device.ts), as a function of a device
// factory: every device (files, PostgreSQL, the tests' memory device) runs it. `other()` opens a
// second device object on the same storage, as another process would.

export type { DeviceFactory, DeviceUnderTest } from './device-fixtures';

export function runDeviceConformance(name: string, make: DeviceFactory): void {
  describe(`JournalDevice conformance: ${name}`, () => {
    let under: DeviceUnderTest | undefined;
    const c = {
      get d(): JournalDevice {
        return under!.device;
      },
      other: (): JournalDevice => under!.other(),
    } satisfies DeviceCase;
    beforeEach(async () => {
      under = await make();
    });
    afterEach(async () => {
      await under?.close();
      under = undefined;
    });
    journalCases(c);
    leaseCases(c);
    storageCases(c);
  });
}

function journalCases(c: DeviceCase): void {
  it('gives a created run its bytes exactly, whole and in ranges that begin and end inside lines', async () => {
    const first = firstGroup('r1');
    await c.d.createRun('r1', first, listing('r1'), lease('a', 1));
    const more = group(2, 3);
    await c.d.appendGroup('r1', { bytes: more, at: first.length, firstSeq: 2 }, lease('a', 1));
    const whole = concat(first, more);
    for (const device of [c.d, c.other()]) {
      assert.equal(await device.journalSize('r1'), whole.length);
      sameBytes(await device.readJournal('r1'), whole);
      // Inside the second line (past a multi-byte character) to inside the third line, and the rest.
      const from = first.length + 30;
      const end = first.length + more.indexOf(0x0a) + 7;
      sameBytes(await device.readJournal('r1', from, end), whole.subarray(from, end));
      sameBytes(await device.readJournal('r1', from), whole.subarray(from));
      sameBytes(await device.readJournal('r1', 0, first.length), first);
      sameBytes(await device.readJournal('r1', 5, 6), whole.subarray(5, 6));
      assert.equal((await device.readJournal('r1', end, end)).length, 0);
      assert.equal((await device.readJournal('r1', whole.length)).length, 0);
    }
  });

  it('tells a missing run (null size, not_found read) and refuses a bad run id', async () => {
    assert.equal(await c.d.journalSize('nope'), null);
    await assert.rejects(c.d.readJournal('nope'), isStoreError('not_found'));
    await assert.rejects(c.d.readJournal('nope', 3, 9), isStoreError('not_found'));
    assert.match(c.d.journalName('r1'), /r1/);
    assert.throws(() => c.d.journalName('../etc'), isStoreError('invalid'));
    assert.throws(() => c.d.journalName(''), isStoreError('invalid'));
  });

  it('refuses to create a run that exists (invalid) and changes nothing of it', async () => {
    const first = firstGroup('r1');
    await c.d.createRun('r1', first, listing('r1', { task: 'the first' }), lease('a', 1));
    await assert.rejects(
      c.other().createRun('r1', firstGroup('r1x'), listing('r1', { task: 'the second' }), null),
      isStoreError('invalid'),
    );
    sameBytes(await c.d.readJournal('r1'), first);
    assert.equal((await c.d.readListing('r1'))?.task, 'the first');
    assert.equal(heldLease(await c.d.readLease('r1')).holderId, 'a');
  });

  it('appends a group at the journal end under the held lease, with its listing', async () => {
    const first = firstGroup('r1');
    await c.d.createRun('r1', first, listing('r1'), lease('a', 3));
    const more = group(2, 2);
    const row = listing('r1', { lastSeq: 3, steps: 1, journalBytes: first.length + more.length, status: 'paused' });
    const after = await c.d.appendGroup('r1', { bytes: more, at: first.length, firstSeq: 2 }, lease('a', 3), row);
    assert.equal(after.holderId, 'a');
    assert.equal(after.generation, 3);
    sameBytes(await c.other().readJournal('r1'), concat(first, more));
    const { v, ...rest } = (await c.d.readListing('r1'))!;
    assert.equal(typeof v, 'number');
    assert.deepEqual(rest, row);
    assert.deepEqual(heldLease(await c.d.readLease('r1')), after, 'as the append renewed it');
  });

  it('refuses an append at another offset than the journal end (lease_lost) and appends nothing', async () => {
    const first = firstGroup('r1');
    await c.d.createRun('r1', first, listing('r1'), lease('a', 1));
    for (const at of [first.length - 1, first.length + 5, 0]) {
      const refused = c.d.appendGroup('r1', { bytes: group(2, 1), at, firstSeq: 2 }, lease('a', 1), listing('r1', { task: 'changed' }));
      await assert.rejects(refused, isStoreError('lease_lost'));
    }
    sameBytes(await c.d.readJournal('r1'), first);
    assert.equal((await c.d.readListing('r1'))?.task, 'fix the tests');
  });

  it('refuses an append under a stale generation, a fenced lease, another holder or none (lease_lost), appending nothing', async () => {
    const cases: Array<[string, LeaseInfo | null, LeaseInfo | null]> = [
      ['stale', lease('a', 2), lease('a', 1)],
      ['fenced', lease('a', 1, { fenced: true }), lease('a', 1)],
      ['taken', lease('b', 2), lease('a', 1)],
      ['free', null, lease('a', 0)],
    ];
    for (const [runId, now, mine] of cases) {
      const first = firstGroup(runId);
      await c.d.createRun(runId, first, listing(runId), lease('a', 1));
      assert.equal(await c.other().swapLease(runId, held(lease('a', 1)), now), true);
      await assert.rejects(
        c.d.appendGroup(runId, { bytes: group(2, 1), at: first.length, firstSeq: 2 }, mine!),
        isStoreError('lease_lost'),
      );
      sameBytes(await c.d.readJournal(runId), first, runId);
    }
  });

  it('cuts a journal back, and the next group goes at the new end', async () => {
    const first = firstGroup('r1');
    const mine = lease('a', 1);
    await c.d.createRun('r1', first, listing('r1'), mine);
    const second = group(2, 2);
    await c.d.appendGroup('r1', { bytes: second, at: first.length, firstSeq: 2 }, mine);
    await c.d.appendGroup('r1', { bytes: group(4, 3), at: first.length + second.length, firstSeq: 4 }, mine);
    await c.d.truncateJournal('r1', first.length + second.length);
    assert.equal(await c.other().journalSize('r1'), first.length + second.length);
    sameBytes(await c.d.readJournal('r1'), concat(first, second));
    const again = group(4, 1, 'again');
    await c.d.appendGroup('r1', { bytes: again, at: first.length + second.length, firstSeq: 4 }, mine);
    sameBytes(await c.other().readJournal('r1'), concat(first, second, again));
    await c.d.closeJournal('r1');
  });
}

function leaseCases(c: DeviceCase): void {
  it('swaps a lease from none to held, renews it, hands it on and releases it, each only when it is as read', async () => {
    await c.d.createRun('r1', firstGroup('r1'), listing('r1'), null);
    const none = await c.d.readLease('r1');
    assert.equal(none.kind, 'none');
    const a = lease('a', 1);
    assert.equal(await c.d.swapLease('r1', none, a), true);
    assert.deepEqual(heldLease(await c.other().readLease('r1')), a);
    assert.equal(await c.other().swapLease('r1', none, lease('x', 1)), false, 'none was read, a holds it');

    const renewed = { ...a, renewedAt: T0 + 5_000 };
    assert.equal(await c.d.swapLease('r1', held(a), renewed), true);
    assert.deepEqual(heldLease(await c.d.readLease('r1')), renewed);

    const b = lease('b', 2, { startTime: '77', acquiredAt: T0 + 9 });
    assert.equal(await c.other().swapLease('r1', held(a), b), true, 'the same holder, generation and fence as read');
    assert.deepEqual(heldLease(await c.d.readLease('r1')), b);
    assert.equal(await c.d.swapLease('r1', held(renewed), lease('c', 3)), false, 'a was read, b holds it');
    assert.deepEqual(heldLease(await c.d.readLease('r1')), b);

    assert.equal(await c.other().swapLease('r1', held(b), null), true);
    assert.equal((await c.d.readLease('r1')).kind, 'none');
    assert.equal(await c.d.swapLease('r1', held(b), lease('d', 3)), false, 'b was read, nobody holds it');
    assert.equal((await c.d.readLease('r1')).kind, 'none');
  });

  it('compares the fence and the generation as read', async () => {
    const a = lease('a', 4);
    await c.d.createRun('r1', firstGroup('r1'), listing('r1'), a);
    const fenced = { ...a, fenced: true };
    assert.equal(await c.other().swapLease('r1', held(a), fenced), true);
    assert.deepEqual(heldLease(await c.d.readLease('r1')), fenced);
    assert.equal(await c.d.swapLease('r1', held(a), lease('a', 5)), false, 'read unfenced, it is fenced');
    assert.equal(await c.d.swapLease('r1', held(lease('a', 3, { fenced: true })), lease('a', 5)), false, 'another generation');
    assert.deepEqual(heldLease(await c.d.readLease('r1')), fenced);
    assert.equal(await c.d.swapLease('r1', held(fenced), lease('b', 5)), true);
    assert.deepEqual(heldLease(await c.d.readLease('r1')), lease('b', 5));
  });
}
