import { strict as assert } from 'node:assert';
import { sha256Hex } from '../../../src/core/patches/hash';
import { DAMAGE_DOC, type LeaseRead } from '../../../src/core/store/device';
import type { LeaseInfo } from '../../../src/core/store/lease-policy';
import { firstGroup, group, heard, held, heldLease, lease, listing, sameBytes, T0, type DeviceCase } from './device-fixtures';

// The device contract's documents, listing rows, runs, blobs, change notices and claims
// (device-conformance.ts runs these with the journal and lease cases).

const text = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('utf8'));
const utf8 = (s: string) => new TextEncoder().encode(s);

export function storageCases(c: DeviceCase): void {
  it('puts, appends, reads, lists by prefix and removes a run’s documents, apart from other runs’', async () => {
    for (const runId of ['r1', 'r2']) await c.d.createRun(runId, firstGroup(runId), listing(runId), null);
    await c.d.putDoc('r1', 'snapshot-000000000001.json', utf8('one\n'), true);
    await c.d.putDoc('r1', 'snapshot-000000000002.json', utf8('two\n'), false);
    await c.d.putDoc('r1', 'a_b.log', utf8('x'), false);
    await c.d.putDoc('r1', 'axb.log', utf8('y'), false);
    await c.d.putDoc('r2', 'snapshot-000000000009.json', utf8('other run\n'), true);
    await c.d.appendDoc('r1', 'facts.log', utf8('first\n'));
    await c.d.appendDoc('r1', 'facts.log', utf8('second\n'));
    await c.d.putDoc('r1', 'snapshot-000000000001.json', utf8('one, again\n'), true);
    const o = c.other();
    assert.equal(text(await o.getDoc('r1', 'facts.log')), 'first\nsecond\n');
    assert.equal(text(await o.getDoc('r1', 'snapshot-000000000001.json')), 'one, again\n');
    assert.equal(await o.getDoc('r1', 'snapshot-000000000009.json'), null);
    assert.deepEqual((await o.listDocs('r1', 'snapshot-')).sort(), ['snapshot-000000000001.json', 'snapshot-000000000002.json']);
    assert.deepEqual(await o.listDocs('r1', 'a_'), ['a_b.log'], 'a prefix is not a pattern');
    assert.deepEqual(await o.listDocs('r1', 'snap%'), []);
    await c.d.removeDoc('r1', 'snapshot-000000000002.json');
    assert.equal(await o.getDoc('r1', 'snapshot-000000000002.json'), null);
    assert.deepEqual(await o.listDocs('r1', 'snapshot-'), ['snapshot-000000000001.json']);
    assert.equal(text(await o.getDoc('r2', 'snapshot-000000000009.json')), 'other run\n');
  });

  it('lists only documents, not what else it keeps of the run (its journal, listing row and lease)', async () => {
    await c.d.createRun('r1', firstGroup('r1'), listing('r1'), lease('a', 1));
    assert.deepEqual(await c.d.listDocs('r1', ''), []);
    await c.d.putDoc('r1', 'snapshot-000000000001.json', utf8('one\n'), true);
    await c.d.appendDoc('r1', 'facts.log', utf8('first\n'));
    assert.deepEqual((await c.other().listDocs('r1', '')).sort(), ['facts.log', 'snapshot-000000000001.json']);
  });

  it('writes and reads listing rows (the format version added); none for a missing run', async () => {
    await c.d.createRun('r1', firstGroup('r1'), listing('r1'), null);
    const row = listing('r1', {
      status: 'interrupted',
      lastSeq: 40,
      steps: 9,
      journalBytes: 9_000,
      parent: { runId: 'r0', step: 3 },
      tornTailCut: { offset: 12, bytes: 7, at: T0 + 1 },
      pendingPatches: 2,
      undoableRestore: true,
      instruction: 'go on',
      workspace: 'git:abc',
    });
    await c.d.writeListing('r1', row, true);
    const { v, ...rest } = (await c.other().readListing('r1'))!;
    assert.ok(Number.isInteger(v) && v > 0);
    assert.deepEqual(rest, row);
    await c.d.writeListing('r1', { ...row, steps: 10 }, false);
    assert.equal((await c.other().readListing('r1'))?.steps, 10);
    assert.equal(await c.d.readListing('nope'), null);
  });

  it('lists every run in run id order with its journal size, listing, lease and damage note', async () => {
    await c.d.createRun('b1', firstGroup('b1'), listing('b1'), lease('a', 1));
    const renewed = await c.d.appendGroup('b1', { bytes: group(2, 2), at: firstGroup('b1').length, firstSeq: 2 }, lease('a', 1));
    await c.d.createRun('a1', firstGroup('a1'), listing('a1', { task: 'a' }), null);
    await c.d.createRun('B2', firstGroup('B2'), listing('B2'), null);
    const damage = utf8(JSON.stringify({ file: c.d.journalName('B2'), offset: 0, message: 'bad line', at: T0 }));
    await c.d.putDoc('B2', DAMAGE_DOC, damage, true);
    const runs = await c.other().listRuns();
    assert.deepEqual(
      runs.map((r) => r.runId),
      ['B2', 'a1', 'b1'],
    );
    for (const run of runs) assert.equal(run.journalBytes, await c.d.journalSize(run.runId), run.runId);
    const [b2, a1, b1] = runs;
    sameBytes(b2!.damage, damage);
    assert.equal(a1!.damage, null);
    assert.equal(a1!.listing?.task, 'a');
    assert.equal(a1!.lease.kind, 'none');
    assert.deepEqual(heldLease(b1!.lease), renewed);
  });

  it('counts a run’s bytes and removes a run whole', async () => {
    await c.d.createRun('r1', firstGroup('r1'), listing('r1'), lease('a', 1));
    await c.d.createRun('r2', firstGroup('r2'), listing('r2'), null);
    await c.d.putDoc('r1', 'snapshot-000000000001.json', utf8('snap\n'), true);
    assert.ok((await c.d.runBytes('r1')) >= firstGroup('r1').length + 5);
    await c.d.removeRun('r1');
    const o = c.other();
    assert.equal(await o.journalSize('r1'), null);
    await assert.rejects(o.readJournal('r1'), (e: unknown) => (e as { code?: string }).code === 'not_found');
    assert.equal(await o.readListing('r1'), null);
    assert.equal(await o.getDoc('r1', 'snapshot-000000000001.json'), null);
    assert.deepEqual(
      (await o.listRuns()).map((r) => r.runId),
      ['r2'],
    );
    await o.createRun('r1', firstGroup('r1'), listing('r1'), null);
    sameBytes(await c.d.readJournal('r1'), firstGroup('r1'));
  });

  it('puts a blob once, reads it, lists it with its size, tells missing ones and removes it', async () => {
    const bytes = utf8('blob bytes ✓');
    const hash = sha256Hex(bytes);
    const absent = sha256Hex(utf8('never put'));
    await c.d.putBlob(hash, bytes);
    await c.other().putBlob(hash, bytes);
    sameBytes(await c.other().getBlob(hash), bytes);
    assert.equal(await c.d.getBlob(absent), null);
    assert.deepEqual(await c.d.missingBlobs([hash, absent]), [absent]);
    assert.deepEqual(await c.d.missingBlobs([]), []);
    const listed = await c.other().listBlobs();
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.hash, hash);
    assert.equal(listed[0]!.size, bytes.length);
    assert.equal(typeof listed[0]!.putAt, 'number');
    await c.d.removeBlob(hash);
    assert.equal(await c.other().getBlob(hash), null);
    assert.deepEqual(await c.d.missingBlobs([hash]), [hash]);
  });

  it('tells a watch of appends the new runs and appends of another device object, not its own', async function () {
    const { told, watch, next } = heard(c.d, 'appends');
    if (!watch) return this.skip();
    try {
      await watch.whenListening?.();
      await c.d.createRun('mine', firstGroup('mine'), listing('mine'), lease('a', 1));
      await c.d.appendGroup('mine', { bytes: group(2, 1), at: firstGroup('mine').length, firstSeq: 2 }, lease('a', 1));
      const o = c.other();
      const created = next('theirs');
      await o.createRun('theirs', firstGroup('theirs'), listing('theirs'), lease('b', 1));
      await created;
      told.length = 0;
      const appended = next('theirs');
      await o.appendGroup('theirs', { bytes: group(2, 1), at: firstGroup('theirs').length, firstSeq: 2 }, lease('b', 1));
      await appended;
      assert.ok(!told.includes('mine'), JSON.stringify(told));
    } finally {
      watch.close();
    }
  });

  it('tells a watch of leases the lease changes of another device object', async function () {
    const { watch, next } = heard(c.d, 'leases');
    if (!watch) return this.skip();
    try {
      await watch.whenListening?.();
      await c.d.createRun('theirs', firstGroup('theirs'), listing('theirs'), null);
      const o = c.other();
      const taken = next('theirs');
      await o.swapLease('theirs', await o.readLease('theirs'), lease('b', 1));
      await taken;
      const released = next('theirs');
      await o.swapLease('theirs', held(lease('b', 1)), null);
      await released;
    } finally {
      watch.close();
    }
  });

  it('claims each claimable run of a workspace once, however many claim at once', async function () {
    if (!c.d.claimRun) return this.skip();
    const make = async (runId: string, change: Parameters<typeof listing>[1], owner: LeaseInfo | null = null) =>
      c.d.createRun(runId, firstGroup(runId), listing(runId, { workspace: 'W', ...change }), owner);
    await make('w1', { status: 'running' });
    await make('w2', { status: 'interrupted' });
    await make('paused', { status: 'paused' });
    await make('elsewhere', { status: 'running', workspace: 'X' });
    await make('skipped', { status: 'running' });
    await make('held', { status: 'running' }, lease('h', 1));
    await make('damaged', { status: 'running' });
    await c.d.putDoc('damaged', DAMAGE_DOC, utf8('{}'), true);
    const take = (holder: string) => (current: LeaseRead) =>
      current.kind === 'held' ? null : lease(holder, (current.kind === 'none' ? (current.generation ?? 0) : 0) + 1);
    const devices = [c.d, c.other(), c.other(), c.d, c.other()];
    const claims = await Promise.all(devices.map((device, i) => device.claimRun!('W', ['skipped'], take(`t${i}`))));
    const won = claims.filter((claim) => claim !== null);
    assert.deepEqual(won.map((claim) => claim.runId).sort(), ['w1', 'w2']);
    for (const claim of won) assert.deepEqual(heldLease(await c.d.readLease(claim.runId)), claim.lease);
    assert.equal(await c.d.claimRun('W', ['skipped'], take('late')), null);
    assert.equal(heldLease(await c.d.readLease('held')).holderId, 'h');
  });
}
