import { strict as assert } from 'node:assert';
import { StoreError, type CheckpointStore, type RunWriter } from '../../../src/core/store/contract';
import type { LedgerEntry } from '../../../src/core/ledger/schema';
import { FORMAT_VERSION, type NewRecord } from '../../../src/core/store/records';
import { EARLIER_EFFECTS } from '../../../src/core/store/resume-state';
import { forkCases } from './conformance-fork';
import { bytesOf, checkpoint, ledgerEntry, ManualClock, message, runInput } from './fixtures';

export interface StoreUnderTest {
  /** A store over the shared storage; call twice to get two "processes" on the same root. */
  open(): CheckpointStore;
  dispose(): Promise<void>;
}

export type StoreFactory = (options: { clock: ManualClock; leaseTimeoutMs: number }) => Promise<StoreUnderTest>;

const isStoreError = (code: StoreError['code']) => (e: unknown) => e instanceof StoreError && e.code === code;

/** A ledger record of call `callId` with its entry changed by `change`. */
function entry(callId: string, stepId: number, status: LedgerEntry['status'], change: Partial<LedgerEntry> = {}): NewRecord {
  const record = ledgerEntry(callId, stepId, status);
  if (record.type !== 'ledger') throw new Error('a ledger record');
  return { ...record, entry: { ...record.entry, ...change } };
}

function patch(patchId: string, callId: string, path: string, blob: string): NewRecord {
  return {
    type: 'patch',
    patch: {
      patchId,
      runId: 'r1',
      stepId: 1,
      toolCallId: callId,
      path,
      op: 'modify',
      beforeHash: blob,
      afterHash: blob,
      afterBlob: blob,
      added: 0,
      removed: 0,
      binary: false,
      createdAt: 1,
      state: 'pending',
    },
  };
}

const compaction: NewRecord = {
  type: 'compaction',
  stepId: 2,
  kind: 'summary',
  tokensBefore: 900,
  tokensAfter: 100,
  contextBudget: 1000,
  messagesBefore: 3,
  messagesAfter: 1,
  clearedCallIds: [],
};

/**
 * A run of three steps, compacted after the second: an idempotent call finished before the
 * compaction, a non-idempotent one finished, one started (open), two patches of a.txt and one of
 * b.txt, an approval, a raise of the budget.
 */
async function threeSteps(writer: { append(records: readonly NewRecord[]): Promise<unknown> }, blob: string): Promise<void> {
  await writer.append([message(0, 0, 'user', 'task'), checkpoint('c1', 0, 'run_start', 1)]);
  await writer.append([message(1, 1, 'assistant', 'read'), entry('old', 1, 'planned'), checkpoint('c2', 1, 'after_model', 2)]);
  await writer.append([entry('old', 1, 'succeeded'), patch('p1', 'old', 'a.txt', blob), message(2, 1, 'user', 'result')]);
  await writer.append([entry('mail', 1, 'succeeded', { idempotency: 'non_idempotent', replayPolicy: 'never' })]);
  await writer.append([compaction, message(0, 2, 'user', 'summary'), checkpoint('c3', 2, 'compacted', 1)]);
  await writer.append([{ type: 'approval', target: 'tool:edit', toolName: 'edit', decision: 'allow_for_run' }]);
  await writer.append([message(1, 3, 'assistant', 'edit'), entry('open', 3, 'planned'), checkpoint('c4', 3, 'after_model', 2)]);
  const stopped = checkpoint('c5', 3, 'tool_started', 2, 7);
  await writer.append([entry('open', 3, 'started'), patch('p2', 'open', 'a.txt', blob), patch('p3', 'open', 'b.txt', blob), stopped]);
}

/** The behaviour every CheckpointStore must have, run against each implementation. */
/** The store, with every writer it hands out noted in `writers`. */
function closingWriters(store: CheckpointStore, writers: RunWriter[]): CheckpointStore {
  const noted = async (writer: Promise<RunWriter>): Promise<RunWriter> => {
    const w = await writer;
    writers.push(w);
    return w;
  };
  return Object.assign(Object.create(store) as CheckpointStore, {
    createRun: (run: Parameters<CheckpointStore['createRun']>[0]) => noted(store.createRun(run)),
    openWriter: (runId: string) => noted(store.openWriter(runId)),
  });
}

export function runStoreConformance(name: string, factory: StoreFactory): void {
  describe(`CheckpointStore conformance: ${name}`, () => {
    let clock: ManualClock;
    let sut: StoreUnderTest;
    let store: CheckpointStore;
    const leaseTimeoutMs = 10_000;

    let writers: RunWriter[] = [];

    beforeEach(async () => {
      clock = new ManualClock();
      const made = await factory({ clock, leaseTimeoutMs });
      writers = [];
      // Every store a test opens notes its writers, so the writers a test left open are closed.
      sut = { ...made, open: () => closingWriters(made.open(), writers) };
      store = sut.open();
    });
    // Writers a test left open are closed first: Windows keeps a folder with an open file from going.
    afterEach(async () => {
      for (const writer of writers) await writer.close().catch(() => undefined);
      await sut.dispose();
    });

    it('creates a run, appends commit groups and reads them back', async () => {
      const writer = await store.createRun(runInput('r1'));
      const stored = await writer.append([checkpoint('c0', 0, 'run_start', 0), message(0, 0, 'user', 'hello')]);
      assert.deepEqual(
        stored.map((r) => r.seq),
        [2, 3],
      );
      await writer.append([message(1, 1, 'assistant', 'hi')]);
      const records = await store.readRecords('r1');
      assert.deepEqual(
        records.map((r) => r.type),
        ['run', 'checkpoint', 'message', 'message'],
      );
      assert.ok(records.every((r) => r.v === FORMAT_VERSION));
      const state = await sut.open().readRun('r1');
      assert.equal(state.messages.length, 2);
      assert.equal(state.lastSeq, 4);
      assert.equal(state.run.task, 'fix the tests');
      await writer.close();
    });

    it('refuses an invalid record and a duplicate run', async () => {
      const writer = await store.createRun(runInput('r1'));
      await assert.rejects(writer.append([{ type: 'note', kind: 'nonsense', text: 'x' } as never]), isStoreError('invalid'));
      await assert.rejects(store.createRun(runInput('r1')), isStoreError('invalid'));
      await writer.append([message(0, 0, 'user', 'still fine')]);
      assert.equal((await store.readRecords('r1')).length, 2);
    });

    it('materialises at checkpoints and follows branches', async () => {
      const writer = await store.createRun(runInput('r1'));
      await writer.append([checkpoint('c0', 0, 'run_start', 0), message(0, 0, 'user', 'task')]);
      await writer.append([message(1, 1, 'assistant', 'plan'), ledgerEntry('k1', 1, 'planned'), checkpoint('c1', 1, 'after_model', 2)]);
      await writer.append([ledgerEntry('k1', 1, 'succeeded'), message(2, 1, 'user', 'result'), checkpoint('c2', 2, 'before_model', 3, 2)]);
      const atC1 = await store.readRun('r1', { atCheckpoint: 'c1' });
      assert.equal(atC1.messages.length, 2);
      assert.equal(atC1.ledger[0]!.status, 'planned');
      await writer.append([{ type: 'branch', checkpointId: 'c0', branchId: 'b1' }]);
      const after = await store.readRun('r1');
      assert.equal(after.messages.length, 0);
      assert.equal(after.ledger.length, 0);
      assert.equal(after.checkpoints.length, 1);
      assert.equal(after.allCheckpoints.length, 3);
      assert.equal(after.budget.turns, 2);
      await assert.rejects(store.readRun('r1', { atCheckpoint: 'missing' }), isStoreError('not_found'));
      await assert.rejects(store.readRun('nope'), isStoreError('not_found'));
    });

    it('lists runs with status and steps', async () => {
      const w1 = await store.createRun(runInput('r1', 'first'));
      await w1.append([checkpoint('c0', 3, 'before_model', 0)]);
      clock.advance(10);
      const w2 = await store.createRun(runInput('r2', 'second'));
      await w2.append([{ type: 'run_end', status: 'completed' }]);
      await w2.close();
      const runs = [...(await sut.open().listRuns())].sort((a, b) => a.runId.localeCompare(b.runId));
      assert.deepEqual(
        runs.map((r) => [r.runId, r.task, r.status, r.leased]),
        [
          ['r1', 'first', 'running', true],
          ['r2', 'second', 'completed', false],
        ],
      );
      assert.equal(runs[0]!.steps, 3);
      assert.ok(runs[1]!.updatedAt > runs[0]!.createdAt);
    });

    it('stores blobs by content, deduplicated', async () => {
      const a = await store.putBlob(bytesOf('same bytes'));
      const b = await store.putBlob(bytesOf('same bytes'));
      assert.equal(a, b);
      assert.match(a, /^[0-9a-f]{64}$/);
      assert.equal(new TextDecoder().decode(await sut.open().getBlob(a)), 'same bytes');
      await assert.rejects(store.getBlob('0'.repeat(64)), isStoreError('not_found'));
    });

    it('refuses a record naming a blob the store does not hold', async () => {
      const writer = await store.createRun(runInput('r1'));
      await assert.rejects(writer.append([ledgerEntry('k1', 1, 'succeeded', 'f'.repeat(64))]), isStoreError('invalid'));
      const ref = await store.putBlob(bytesOf('{"result":1}'));
      await writer.append([ledgerEntry('k1', 1, 'succeeded', ref)]);
      const report = await store.verify('r1');
      assert.equal(report.ok, true);
      assert.equal(report.records, 2);
      assert.deepEqual(report.missingBlobs, []);
    });

    it('gives one writer per run', async () => {
      const writer = await store.createRun(runInput('r1'));
      const other = sut.open();
      await assert.rejects(other.openWriter('r1'), isStoreError('lease_held'));
      const info = (await other.listRuns()).find((run) => run.runId === 'r1')?.holder;
      assert.equal(info?.holderId, writer.holderId);
      await writer.close();
      await assert.rejects(writer.append([message(0, 0, 'user', 'x')]), isStoreError('lease_lost'));
      const second = await other.openWriter('r1');
      await second.append([message(0, 0, 'user', 'x')]);
      assert.equal((await store.readRecords('r1')).length, 2);
    });

    it('takes over a stale lease; the old writer gets lease_lost and stops', async () => {
      const writer = await store.createRun(runInput('r1'));
      await writer.append([message(0, 0, 'user', 'a')]);
      clock.advance(leaseTimeoutMs / 2);
      await writer.renewLease();
      clock.advance(leaseTimeoutMs - 1);
      await assert.rejects(sut.open().openWriter('r1'), isStoreError('lease_held'));
      clock.advance(2);
      const taker = await sut.open().openWriter('r1');
      await assert.rejects(writer.append([message(1, 0, 'assistant', 'lost')]), isStoreError('lease_lost'));
      await assert.rejects(writer.renewLease(), isStoreError('lease_lost'));
      await taker.append([message(1, 0, 'assistant', 'kept')]);
      const state = await store.readRun('r1');
      assert.equal(state.messages.length, 2);
      assert.equal((state.messages[1]!.content as { text: string }[])[0]!.text, 'kept');
      await writer.close();
      assert.equal((await store.listRuns()).find((run) => run.runId === 'r1')?.holder?.holderId, taker.holderId);
    });

    it('a writer renews by itself when it appends after half the timeout', async () => {
      const writer = await store.createRun(runInput('r1'));
      for (let i = 0; i < 5; i++) {
        clock.advance(leaseTimeoutMs * 0.6);
        await writer.append([message(i, 0, 'user', `m${i}`)]);
      }
      await assert.rejects(sut.open().openWriter('r1'), isStoreError('lease_held'));
    });

    it('collects old finished runs and unreferenced blobs, never live ones', async () => {
      const shared = await store.putBlob(bytesOf('shared'));
      const onlyOld = await store.putBlob(bytesOf('only in the old run'));
      const finished = async (runId: string, refs: string[]) => {
        const w = await store.createRun(runInput(runId));
        await w.append(refs.map((ref, i) => ledgerEntry(`k${i}`, 1, 'succeeded', ref)));
        await w.append([{ type: 'run_end', status: 'completed' }]);
        await w.close();
        clock.advance(1000);
      };
      await finished('old', [shared, onlyOld]);
      await finished('mid', [shared]);
      const paused = await store.createRun(runInput('paused'));
      await paused.append([{ type: 'status', status: 'paused' }]);
      await paused.close();
      clock.advance(1000);
      const live = await store.createRun(runInput('live'));
      await live.append([{ type: 'run_end', status: 'failed' }]);
      clock.advance(1000);
      const interrupted = await store.createRun(runInput('interrupted'));
      await interrupted.append([{ type: 'status', status: 'interrupted' }]);
      await interrupted.close();
      await finished('new', []);
      clock.advance(60 * 60_000);
      await live.renewLease();
      const result = await store.collectGarbage({ maxRuns: 1 });
      assert.deepEqual(result.removedRuns, ['old', 'mid', 'new']);
      assert.equal(result.removedBlobs, 2);
      assert.ok(result.freedBytes > 0);
      const left = (await store.listRuns()).map((r) => r.runId).sort();
      assert.deepEqual(left, ['interrupted', 'live', 'paused']);
      await assert.rejects(store.getBlob(shared), isStoreError('not_found'));
      const none = await store.collectGarbage({ maxBytes: 0 });
      assert.deepEqual(none.removedRuns, []);
    });

    it("gc keeps the blobs a ledger entry's write-ahead intents name (a resume records the patch of a write cut before it)", async () => {
      const before = await store.putBlob(bytesOf('before the write'));
      const after = await store.putBlob(bytesOf('after the write'));
      const unnamed = await store.putBlob(bytesOf('named by nothing'));
      const writer = await store.createRun(runInput('cut'));
      const started = ledgerEntry('k', 1, 'started');
      if (started.type !== 'ledger') throw new Error('a ledger record');
      const intent = { path: 'notes.md', beforeHash: before, afterHash: after, beforeBlob: before, afterBlob: after };
      await writer.append([
        { ...started, entry: { ...started.entry, intents: [intent] } },
        { type: 'status', status: 'interrupted' },
      ]);
      await writer.close();
      clock.advance(60 * 60_000);
      const result = await store.collectGarbage({ maxBytes: 10_000_000 });
      assert.equal(result.removedBlobs, 1, 'only the blob nothing names');
      await assert.rejects(store.getBlob(unnamed), isStoreError('not_found'));
      assert.equal(new TextDecoder().decode(await store.getBlob(before)), 'before the write');
      assert.equal(new TextDecoder().decode(await store.getBlob(after)), 'after the write');
    });

    it('gc keeps runs within the quota and blobs still referenced', async () => {
      const shared = await store.putBlob(bytesOf('shared'));
      for (const runId of ['a', 'b']) {
        const w = await store.createRun(runInput(runId));
        await w.append([ledgerEntry('k', 1, 'succeeded', shared), { type: 'run_end', status: 'completed' }]);
        await w.close();
        clock.advance(1000);
      }
      clock.advance(60 * 60_000);
      const result = await store.collectGarbage({ maxRuns: 1, maxBytes: 10_000_000 });
      assert.deepEqual(result.removedRuns, ['a']);
      assert.equal(result.removedBlobs, 0);
      assert.equal(new TextDecoder().decode(await store.getBlob(shared)), 'shared');
    });

    it('the resume state holds what the next step needs: the history since the compaction, open and non-idempotent calls, latest patches, counters', async () => {
      const blob = await store.putBlob(bytesOf('content'));
      const writer = await store.createRun(runInput('r1'));
      await threeSteps(writer, blob);
      await writer.close();
      const state = await sut.open().readResumeState('r1');
      assert.deepEqual(
        state.messages.map((m) => (m.content as { text: string }[])[0]!.text),
        ['summary', 'edit'],
      );
      assert.deepEqual(
        state.ledger.map((e) => [e.callId, e.status]),
        [
          ['mail', 'succeeded'],
          ['open', 'started'],
        ],
        'a finished idempotent call the history no longer names is left to the journal',
      );
      assert.deepEqual(
        state.patches.map((p) => p.patchId),
        ['p2', 'p3'],
        'the latest patch of each file',
      );
      assert.equal(state.patchCount, 3);
      assert.equal(state.checkpointCount, 5);
      assert.equal(state.latestCheckpoint?.checkpointId, 'c5');
      assert.equal(state.budget.turns, 7);
      assert.equal(state.stepId, 3);
      assert.equal(state.lastSeq, 21);
      assert.deepEqual(
        state.approvals.map((a) => a.decision),
        ['allow_for_run'],
      );
      const full = await sut.open().readRun('r1');
      assert.deepEqual(state.messages, full.messages, 'the same messages as the whole fold');
      assert.deepEqual(state.budget, full.budget);
    });

    it('the resume state follows a branch and a run_end, as the whole fold does', async () => {
      const blob = await store.putBlob(bytesOf('content'));
      const writer = await store.createRun(runInput('r1'));
      await threeSteps(writer, blob);
      await writer.append([{ type: 'branch', checkpointId: 'c2', branchId: 'b1' }]);
      const branched = await sut.open().readResumeState('r1');
      assert.deepEqual(
        branched.messages.map((m) => (m.content as { text: string }[])[0]!.text),
        ['task', 'read'],
      );
      assert.deepEqual(branched.ledger, [], 'the calls planned after c2 left the history; the one before it is finished and not named');
      assert.deepEqual(
        (await sut.open().readRun('r1')).ledger.map((e) => [e.callId, e.status]),
        [['old', 'succeeded']],
      );
      assert.equal(branched.latestCheckpoint?.checkpointId, 'c2');
      await writer.append([{ type: 'run_end', status: 'completed', summary: 'done' }]);
      await writer.close();
      const ended = await sut.open().readResumeState('r1');
      assert.equal(ended.ended?.status, 'completed');
      assert.equal(ended.status, 'completed');
      assert.equal(ended.statusReason, 'done');
      await assert.rejects(store.readResumeState('nope'), isStoreError('not_found'));
    });

    it('of a long run of commands, the resume state keeps the latest completed ones the recovery note names, and every one of the current step', async () => {
      const writer = await store.createRun(runInput('r1'));
      const command = { idempotency: 'non_idempotent', replayPolicy: 'never' } as const;
      for (let step = 1; step <= 40; step++) {
        await writer.append([entry(`cmd${step}`, step, 'succeeded', command), checkpoint(`k${step}`, step, 'tool_finished', 0)]);
      }
      await writer.append([entry('failed', 40, 'failed', command), entry('now1', 41, 'succeeded', command)]);
      await writer.append([entry('now2', 41, 'succeeded', command), checkpoint('k41', 41, 'tool_finished', 0)]);
      await writer.close();
      const state = await sut.open().readResumeState('r1');
      const latest = Array.from({ length: EARLIER_EFFECTS }, (_, i) => `cmd${40 - EARLIER_EFFECTS + 1 + i}`);
      assert.deepEqual(
        state.ledger.map((e) => e.callId),
        [...latest, 'now1', 'now2'],
      );
      assert.equal((await sut.open().readRun('r1')).ledger.length, 43, 'the journal keeps every call');
    });

    it("of a long run of approved commands, the resume state keeps the run's rules and the decisions on the calls it keeps", async () => {
      const writer = await store.createRun(runInput('r1'));
      const command = { idempotency: 'non_idempotent', replayPolicy: 'ask' } as const;
      const approval = (target: string, decision: 'allow_once' | 'allow_for_run' | 'deny') =>
        ({ type: 'approval', target, toolName: 'run_command', decision }) as const;
      await writer.append([approval('tool:read_file', 'allow_for_run')]);
      for (let step = 1; step <= 40; step++) {
        await writer.append([approval(`cmd${step}`, 'allow_once'), entry(`cmd${step}`, step, 'succeeded', command)]);
        await writer.append([checkpoint(`k${step}`, step, 'tool_finished', 0)]);
      }
      await writer.append([approval('now', 'deny'), entry('now', 41, 'planned', command), approval('gone', 'allow_once')]);
      await writer.close();
      const state = await sut.open().readResumeState('r1');
      const kept = new Set(state.ledger.map((e) => e.callId));
      assert.equal(kept.size, EARLIER_EFFECTS + 1);
      assert.deepEqual(
        state.approvals.map((a) => `${a.target} ${a.decision}`),
        ['tool:read_file allow_for_run', ...[...kept].filter((id) => id !== 'now').map((id) => `${id} allow_once`), 'now deny'],
      );
      assert.equal((await sut.open().readRun('r1')).approvals.length, 43, 'the journal keeps every decision');
    });

    it('a writer hands over the resume state of the run as it opened it, and its appends leave that state as it was', async () => {
      const blob = await store.putBlob(bytesOf('content'));
      const first = await store.createRun(runInput('r1'));
      assert.equal(first.resumeState.lastSeq, 1);
      assert.deepEqual(first.resumeState.messages, []);
      await threeSteps(first, blob);
      await first.close();
      const writer = await sut.open().openWriter('r1');
      const opened = structuredClone(writer.resumeState);
      assert.deepEqual(writer.resumeState, await sut.open().readResumeState('r1'));
      await writer.append([
        { type: 'message', index: 2, stepId: 4, message: { role: 'assistant', content: [{ type: 'text', text: 'later' }] } },
        { type: 'status', status: 'paused', reason: 'later' },
      ]);
      assert.deepEqual(writer.resumeState, opened, 'the appends fold into the writer, not into the state it handed over');
      await writer.close();
      const after = await sut.open().readResumeState('r1');
      assert.equal(after.messages.length, 3);
      assert.equal(after.status, 'paused');
    });

    forkCases(() => ({ store, clock }));
  });
}
