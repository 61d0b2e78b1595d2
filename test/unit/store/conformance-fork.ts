import { strict as assert } from 'node:assert';
import { StoreError, type CheckpointStore } from '../../../src/core/store/contract';
import type { NewRecord } from '../../../src/core/store/records';
import { bytesOf, checkpoint, ledgerEntry, type ManualClock, message, runInput } from './fixtures';

// The fork cases of the store conformance suite (conformance.ts runs them against every store).

const texts = (messages: readonly { content: unknown }[]) => messages.map((m) => (m.content as { text: string }[])[0]!.text);

/** Three steps, each a model reply and a result; the third cut after its reply. */
async function threeSteps(store: CheckpointStore, runId: string, blob?: string): Promise<void> {
  const w = await store.createRun(runInput(runId));
  const step = (n: number, at: number): NewRecord[][] => [
    [checkpoint(`${runId}-b${n}`, n, 'before_model', at)],
    [message(at, n, 'assistant', `reply ${n}`), checkpoint(`${runId}-a${n}`, n, 'after_model', at + 1)],
    [
      ...(blob ? [ledgerEntry(`k${n}`, n, 'succeeded', blob)] : []),
      message(at + 1, n, 'user', `result ${n}`),
      checkpoint(`${runId}-f${n}`, n, 'tool_finished', at + 2),
    ],
  ];
  await w.append([message(0, 0, 'user', 'task'), checkpoint(`${runId}-s`, 0, 'run_start', 1)]);
  for (const group of [...step(1, 1), ...step(2, 3), ...step(3, 5).slice(0, 2)]) await w.append(group);
  await w.close();
}

export function forkCases(get: () => { store: CheckpointStore; clock: ManualClock }): void {
  describe('forks', () => {
    it('a fork holds the parent history up to the start of its step, records its parent, and leaves the parent as it was', async () => {
      const { store } = get();
      await threeSteps(store, 'p');
      const before = await store.readRecords('p');
      const summary = await store.forkRun('p', { runId: 'f', step: 2, files: 'keep' });
      assert.deepEqual(summary.parent, { runId: 'p', step: 2 });
      assert.equal(summary.status, 'paused');
      const fork = await store.readRun('f');
      assert.deepEqual(texts(fork.messages), ['task', 'reply 1', 'result 1']);
      assert.equal(fork.run.runId, 'f');
      assert.equal(fork.run.parent?.runId, 'p');
      assert.equal(fork.status, 'paused');
      assert.equal(fork.stepId, 1);
      assert.equal(fork.checkpoints.at(-1)?.checkpointId, 'p-f1');
      assert.deepEqual(await store.readRecords('p'), before, 'the parent is not written');
      assert.deepEqual(texts((await store.readResumeState('f')).messages), ['task', 'reply 1', 'result 1']);
      const listed = (await store.listRuns()).find((r) => r.runId === 'f');
      assert.deepEqual(listed?.parent, { runId: 'p', step: 2 });
    });

    it('a fork goes on by itself and the parent stays resumable', async () => {
      const { store } = get();
      await threeSteps(store, 'p');
      await store.forkRun('p', { runId: 'f', step: 3, files: 'keep' });
      const w = await store.openWriter('f');
      assert.deepEqual(texts(w.resumeState.messages), ['task', 'reply 1', 'result 1', 'reply 2', 'result 2']);
      const [stored] = await w.append([message(5, 3, 'assistant', 'another reply'), checkpoint('f-a3', 3, 'after_model', 6)]);
      await w.close();
      assert.equal(
        stored!.seq,
        (await store.readRecords('p')).length + 2,
        'numbered after the parent records it stands on and its fork record',
      );
      assert.deepEqual(texts((await store.readRun('f')).messages).slice(-1), ['another reply']);
      assert.deepEqual(texts((await store.readRun('p')).messages).slice(-1), ['reply 3']);
      const parent = await store.openWriter('p');
      await parent.append([message(6, 3, 'user', 'result 3')]);
      await parent.close();
      assert.deepEqual(
        texts((await store.readResumeState('f')).messages).slice(-1),
        ['another reply'],
        "a later parent record is not the fork's",
      );
      await store.forkRun('f', { runId: 'ff', step: 3, files: 'keep' });
      assert.deepEqual(texts((await store.readRun('ff')).messages), ['task', 'reply 1', 'result 1', 'reply 2', 'result 2']);
    });

    it("lists a fork's first new instruction (not its parent's), as soon as it is appended", async () => {
      const { store } = get();
      await threeSteps(store, 'p');
      const parent = await store.openWriter('p');
      await parent.append([{ type: 'instruction', text: 'Use the Oxford comma', after: 'paused' }]);
      await parent.close();
      await store.forkRun('p', { runId: 'f', step: 3, files: 'keep' });
      const listed = async (runId: string) => (await store.listRuns()).find((r) => r.runId === runId)?.instruction;
      assert.equal(await listed('p'), 'Use the Oxford comma');
      assert.equal(await listed('f'), undefined, "the parent's instruction is not the fork's");
      const w = await store.openWriter('f');
      await w.append([{ type: 'instruction', text: 'Say hello\n   in French', after: 'paused' }]);
      assert.equal(await listed('f'), 'Say hello in French', 'listed while the writer still holds the fork');
      await w.append([{ type: 'instruction', text: 'and then in German', after: 'completed' }]);
      await w.close();
      assert.equal(await listed('f'), 'Say hello in French', 'the first one names it');
      assert.equal((await store.readResumeState('f')).firstInstruction, 'Say hello in French');
    });

    it('refuses a step the parent does not have and a fork id in use, writing nothing', async () => {
      const { store } = get();
      await threeSteps(store, 'p');
      await assert.rejects(
        store.forkRun('p', { runId: 'f', step: 9, files: 'keep' }),
        (e: unknown) => e instanceof StoreError && e.code === 'invalid',
      );
      await assert.rejects(
        store.forkRun('p', { runId: 'p', step: 1, files: 'keep' }),
        (e: unknown) => e instanceof StoreError && e.code === 'invalid',
      );
      await assert.rejects(
        store.forkRun('nope', { runId: 'f', step: 1, files: 'keep' }),
        (e: unknown) => e instanceof StoreError && e.code === 'not_found',
      );
      assert.deepEqual(
        (await store.listRuns()).map((r) => r.runId),
        ['p'],
      );
    });

    it('gc keeps a run a fork stands on, and the blobs its records name', async () => {
      const { store, clock } = get();
      const blob = await store.putBlob(bytesOf('a result the fork relies on'));
      await threeSteps(store, 'p', blob);
      const w = await store.openWriter('p');
      await w.append([{ type: 'run_end', status: 'completed' }]);
      await w.close();
      clock.advance(1000);
      await store.forkRun('p', { runId: 'f', step: 2, files: 'keep' });
      clock.advance(60 * 60_000);
      const result = await store.collectGarbage({ maxRuns: 0, maxBytes: 0 });
      assert.deepEqual(result.removedRuns, []);
      assert.equal(new TextDecoder().decode(await store.getBlob(blob)), 'a result the fork relies on');
      assert.equal((await store.verify('f')).ok, true);
      assert.deepEqual(texts((await store.readRun('f')).messages), ['task', 'reply 1', 'result 1']);
    });
  });
}
