import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Timers } from '../../../src/core/ports';
import { StoreError } from '../../../src/core/store/contract';
import type { StoreFs } from '../../../src/core/store/fs-port';
import type { ProcessIdentity } from '../../../src/core/store/lease-policy';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';
import { openFileStore, processStartTime } from '../../../src/host/node/store-factory';
import { leaseOf, ledgerEntry, ManualClock, message, runInput } from './fixtures';

const TIMEOUT = 15_000;

/** Timers a test fires by hand: `tick()` runs every live timer once. */
class ManualTimers implements Timers {
  private readonly live = new Set<() => Promise<void>>();
  every(_ms: number, tick: () => Promise<void>): { stop(): void } {
    this.live.add(tick);
    return { stop: () => this.live.delete(tick) };
  }
  get count(): number {
    return this.live.size;
  }
  async tick(): Promise<void> {
    await Promise.all([...this.live].map((tick) => tick()));
  }
}

/** A process on the host `host`: `alive` lists the pids that exist there, with their start times. */
function identity(pid: number, host: string, alive: Map<number, string>): ProcessIdentity {
  return {
    pid,
    hostname: host,
    startTime: alive.get(pid) ?? 'unknown',
    isAlive: (p) => alive.has(p),
    startTimeOf: (p) => alive.get(p),
  };
}

const isCode = (code: StoreError['code']) => (e: unknown) => e instanceof StoreError && e.code === code;

describe('who holds a run: heartbeat, holder identity, fencing', () => {
  let root: string;
  let clock: ManualClock;
  let timers: ManualTimers;
  const alive = new Map<number, string>();
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'lease-holder-'));
    clock = new ManualClock();
    timers = new ManualTimers();
    alive.clear();
    alive.set(100, 'start-100');
    alive.set(200, 'start-200');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const store = (pid: number, host = 'box', fs?: StoreFs) =>
    openFileStore(root, { clock, timers, leaseTimeoutMs: TIMEOUT, process: identity(pid, host, alive), ...(fs ? { fs } : {}) });

  it('a holder that appends nothing for far longer than the timeout (a long command) keeps the run: its timer renews the lease', async () => {
    const writer = await store(100, 'box-a').createRun(runInput('r1'));
    for (let i = 0; i < 8; i++) {
      clock.advance(TIMEOUT / 3);
      await timers.tick();
    }
    // 40 s without an append; a process on another host only has the heartbeat to go by.
    const refused = await store(200, 'box-b')
      .openWriter('r1')
      .catch((e: unknown) => e);
    assert.ok(isCode('lease_held')(refused), String(refused));
    assert.match((refused as Error).message, /pid 100 on box-a, heartbeat 0 s ago/);
    await writer.append([message(0, 0, 'user', 'still mine')]);
    await writer.close();
    assert.equal(timers.count, 0, 'the heartbeat stops when the writer closes');
  });

  it('a heartbeat older than the timeout frees the run for another host; the old writer is refused', async () => {
    const writer = await store(100, 'box-a').createRun(runInput('r1'));
    clock.advance(TIMEOUT + 1);
    const taker = await store(200, 'box-b').openWriter('r1');
    await assert.rejects(writer.append([message(0, 0, 'user', 'late')]), isCode('lease_lost'));
    await taker.append([message(0, 0, 'user', 'new holder')]);
    await taker.close();
  });

  it('on the same host a live holder is never taken over, however old its heartbeat; a dead one at once', async () => {
    const writer = await store(100).createRun(runInput('r1'));
    clock.advance(10 * TIMEOUT);
    await assert.rejects(store(200).openWriter('r1'), isCode('lease_held'));
    const summary = (await store(200).listRuns())[0]!;
    assert.equal(summary.leased, true);
    assert.equal(summary.holder?.pid, 100);
    alive.delete(100);
    const taker = await store(200).openWriter('r1');
    assert.equal(leaseOf(store(200), 'r1')?.generation, 1);
    await taker.close();
    await writer.close().catch(() => undefined);
  });

  it('a pid reused by another process (another start time) is not taken for the holder', async () => {
    const writer = await store(100).createRun(runInput('r1'));
    await assert.rejects(store(200).openWriter('r1'), isCode('lease_held'), 'the same pid and start time: the holder lives');
    alive.set(100, 'a-later-start');
    const taker = await store(200).openWriter('r1');
    const lease = leaseOf(store(200), 'r1');
    assert.equal(lease?.holderId, taker.holderId, 'the process that reused pid 100 is not the holder: the run is taken');
    assert.equal(lease?.generation, 1);
    await assert.rejects(writer.append([message(0, 0, 'user', 'from the gone holder')]), isCode('lease_lost'));
    await taker.append([message(0, 0, 'user', 'new holder')]);
    await taker.close();
    await writer.close().catch(() => undefined);
    const texts = (await store(200).readRun('r1')).messages.map((m) => (m.content as { text: string }[])[0]!.text);
    assert.deepEqual(texts, ['new holder']);
  });

  it('a take-over fences the live holder: its next append and renewal are refused with a clear message; the taker writes', async () => {
    const writer = await store(100).createRun(runInput('r1'));
    await writer.append([message(0, 0, 'user', 'before')]);
    const other = store(200);
    await assert.rejects(other.openWriter('r1'), isCode('lease_held'));
    await other.fenceLease('r1');
    const taker = await other.openWriter('r1');
    assert.equal(leaseOf(other, 'r1')?.generation, 2, 'created 0, fenced 1, taken 2');
    const lost = await writer.append([message(1, 0, 'assistant', 'after')]).catch((e: unknown) => e);
    assert.ok(isCode('lease_lost')(lost));
    assert.match((lost as Error).message, /taken over .*this writer stopped writing/);
    await writer.close();
    assert.equal(leaseOf(other, 'r1')?.holderId, taker.holderId, 'the fenced writer leaves the new lease alone');
    await taker.append([message(1, 0, 'assistant', 'taken over')]);
    await taker.close();
    const texts = (await other.readRun('r1')).messages.map((m) => (m.content as { text: string }[])[0]!.text);
    assert.deepEqual(texts, ['before', 'taken over']);
  });

  it('a fenced holder stops at its next heartbeat, before any append', async () => {
    const writer = await store(100).createRun(runInput('r1'));
    await store(200).fenceLease('r1');
    await timers.tick();
    assert.equal(timers.count, 0, 'the heartbeat found the fence and stopped');
    await assert.rejects(writer.append([message(0, 0, 'user', 'x')]), isCode('lease_lost'));
  });

  it("an append checks the holder and the journal's size right before it writes, with nothing awaited between", async () => {
    const ops: string[] = [];
    const inner = new NodeStoreFs();
    const fs = new Proxy(inner, {
      get(target, name: keyof NodeStoreFs) {
        const value = target[name];
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const path = typeof args[0] === 'string' ? args[0] : ((args[0] as { path?: string } | undefined)?.path ?? '');
          ops.push(`${String(name)} ${path.split('/').slice(-2).join('/')}`);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const s = store(100, 'box', fs);
    const blob = await s.putBlob(new TextEncoder().encode('result'));
    const writer = await s.createRun(runInput('r1'));
    ops.length = 0;
    await writer.append([ledgerEntry('c1', 1, 'succeeded', blob)]);
    const leaseRead = ops.findIndex((op) => op.endsWith('r1/lease.json'));
    const write = ops.findIndex((op) => op.startsWith('write '));
    assert.ok(leaseRead >= 0 && write > leaseRead, ops.join('\n'));
    const between = ops.slice(leaseRead + 1, write).filter((op) => !op.startsWith('size '));
    assert.deepEqual(between, [], `only the size check may sit between the lease check and the write:\n${ops.join('\n')}`);
    await writer.close();
  });

  it('the Node host tells the start time of a live process and none for a missing one', () => {
    if (process.platform !== 'linux') return;
    assert.match(processStartTime(process.pid) ?? '', /^\d+$/);
    assert.equal(processStartTime(2 ** 22 + 12345), undefined);
  });
});
