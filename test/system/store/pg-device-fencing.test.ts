import { strict as assert } from 'node:assert';
import { StoreError } from '../../../src/core/store/contract';
import type { LeaseInfo } from '../../../src/core/store/lease-policy';
import { PgJournalDevice } from '../../../src/host/node/pg/pg-device';
import { testPostgres, type TestPostgres } from '../../support/pg-server';
import { firstGroup, group, heard, held, lease, listing } from '../../unit/store/device-fixtures';

// The PostgreSQL journal device under concurrency: a writer's appends racing the take-over of its
// lease, the notices of refused appends, and a watch whose connection is cut. Two device objects
// on one schema, as two processes sharing a database.
describe('PostgreSQL journal device: fencing and notices', () => {
  let server: TestPostgres;
  let schema: string;
  let opened: PgJournalDevice[];
  const open = () => {
    const device = new PgJournalDevice({ url: server.url, schema });
    opened.push(device);
    return device;
  };

  beforeEach(async () => {
    server = await testPostgres();
    schema = await server.newSchema();
    opened = [];
  });
  afterEach(async () => {
    await Promise.all(opened.map((d) => d.dispose()));
    await server.dropSchema(schema);
  });

  /** Appends groups of one record under `mine` until refused; gives the refusal. */
  async function appendUntilRefused(device: PgJournalDevice, runId: string, mine: LeaseInfo, onAppended: () => void): Promise<unknown> {
    let at = (await device.journalSize(runId))!;
    for (let seq = 2; ; seq++) {
      const bytes = group(seq, 1);
      try {
        await device.appendGroup(runId, { bytes, at, firstSeq: seq }, mine);
      } catch (error) {
        return error;
      }
      at += bytes.length;
      onAppended();
    }
  }

  it('lands nothing of a writer once its lease is taken, though it was appending as it was taken', async () => {
    const writer = open();
    const taker = open();
    const mine = lease('a', 1);
    await writer.createRun('r1', firstGroup('r1'), listing('r1'), mine);
    let appended = 0;
    let started!: () => void;
    const going = new Promise<void>((resolve) => (started = resolve));
    const refused = appendUntilRefused(writer, 'r1', mine, () => ++appended === 3 && started());
    await going;
    assert.equal(await taker.swapLease('r1', held(mine), lease('b', 2)), true);
    const sizeAtTake = await taker.journalSize('r1');
    const error = await refused;
    assert.ok(error instanceof StoreError && error.code === 'lease_lost', String(error));
    assert.match((error as Error).message, /generation 1 is no longer current/);
    assert.equal(await taker.journalSize('r1'), sizeAtTake, 'no append landed after the take');
    const rows = await taker.readJournal('r1');
    assert.equal(rows.length, sizeAtTake);
  });

  it('tells no watch of an append it refused', async () => {
    const watcher = open();
    const writer = open();
    const { told, watch, next } = heard(watcher, 'appends');
    await watch!.whenListening!();
    await writer.createRun('refused', firstGroup('refused'), listing('refused'), lease('a', 1));
    const created = next('landed');
    await writer.createRun('landed', firstGroup('landed'), listing('landed'), lease('a', 1));
    await created;
    told.length = 0;
    const wrong = writer.appendGroup('refused', { bytes: group(2, 1), at: 0, firstSeq: 2 }, lease('a', 1));
    await assert.rejects(wrong, (e: unknown) => e instanceof StoreError && e.code === 'lease_lost' && /ends at byte/.test(e.message));
    await assert.rejects(
      writer.appendGroup('refused', { bytes: group(2, 1), at: firstGroup('refused').length, firstSeq: 2 }, lease('a', 7)),
      (e: unknown) => e instanceof StoreError && e.code === 'lease_lost' && /generation 7/.test(e.message),
    );
    // Notices are delivered in commit order: once the later append is told, the refused ones would have been.
    const landed = next('landed');
    await writer.appendGroup('landed', { bytes: group(2, 1), at: firstGroup('landed').length, firstSeq: 2 }, lease('a', 1));
    await landed;
    assert.deepEqual(told, ['landed']);
  });

  it("tells a lease watch neither its own object's swaps nor renewals", async () => {
    const watcher = open();
    const other = open();
    const { told, watch, next } = heard(watcher, 'leases');
    await watch!.whenListening!();
    for (const runId of ['mine', 'renewed', 'taken']) await watcher.createRun(runId, firstGroup(runId), listing(runId), null);
    assert.equal(await watcher.swapLease('mine', { kind: 'none' }, lease('a', 1)), true);
    const first = next('renewed');
    assert.equal(await other.swapLease('renewed', await other.readLease('renewed'), lease('b', 1)), true);
    await first;
    told.length = 0;
    assert.equal(await other.swapLease('renewed', held(lease('b', 1)), lease('b', 1, { renewedAt: Date.now() })), true);
    // Notices are delivered in commit order: once the later take is told, a notice of the renewal would have been.
    const taken = next('taken');
    assert.equal(await other.swapLease('taken', await other.readLease('taken'), lease('c', 1)), true);
    await taken;
    assert.deepEqual(told, ['taken']);
  });

  it('a watch whose connection is cut reconnects and tells what was appended meanwhile', async () => {
    const watcher = open();
    const writer = open();
    const { told, watch, next } = heard(watcher, 'appends');
    await watch!.whenListening!();
    const killed = await writer.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::integer AS n FROM pg_stat_activity
        WHERE application_name = 'agent-checkpoints-watch' AND pid <> pg_backend_pid()`,
    );
    assert.equal(killed.rows[0]!.n, 1, "the watch's own connection");
    // Written while the watch is (most likely) away: told by the catch-up after it reconnects, or live.
    const gap = next('r-gap');
    await writer.createRun('r-gap', firstGroup('r-gap'), listing('r-gap', { updatedAt: Date.now() }), null);
    await gap;
    const live = next('r-live');
    await writer.createRun('r-live', firstGroup('r-live'), listing('r-live', { updatedAt: Date.now() }), null);
    await live;
    assert.deepEqual([...new Set(told)], ['r-gap', 'r-live']);
  });
});
