import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TRUNCATED_INPUT_MESSAGE } from '../../../src/core/runtime/calls';
import { CONTINUE_AFTER_MAX_TOKENS } from '../../../src/core/runtime/loop';
import { StoreError } from '../../../src/core/store/contract';
import { atSavePoint, atToolResultsMessage, crashingStore } from './crash-store';
import { answer, byTurn, harness, lastToolResults, reply, requestMessages, SETTINGS, startedCalls, toolUse, type Harness } from './harness';

describe('runtime stops, limits and approvals (real SDK, loopback server)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('429 and 500 are retried by the provider and the run completes', async () => {
    h = await harness({
      script: [{ fault: 'status', status: 429, retryAfterMs: 1 }, { fault: 'status', status: 500, retryAfterMs: 1 }, answer('fine')],
    });
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    assert.equal(h.fake.requests.length, 3);
    assert.ok(h.events.some((e) => e.type === 'model' && e.event.type === 'retry'));
  });

  it('a model error after the retries pauses the run; resume completes it', async () => {
    h = await harness({ script: [{ fault: 'status', status: 400, message: 'bad' }, answer('fine')] });
    const first = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(first.status, 'paused');
    assert.match(first.reason!, /model error \(bad_request 400\)/);
    const second = await h.runtime().resume(first.runId);
    assert.equal(second.status, 'completed');
  });

  it('a tool_use cut off at max_tokens gets an is_error result and the loop continues', async () => {
    h = await harness({
      script: [
        reply(
          [
            { type: 'text', text: 'Writing.' },
            {
              ...toolUse('t1', 'write_file', { path: 'big.txt', content: 'x' }),
              rawInputJson: '{"path":"big.txt","content":"abc',
            } as never,
          ],
          'max_tokens',
        ),
        answer('ok'),
      ],
    });
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    const [result] = lastToolResults(h.fake, 1);
    assert.equal(result!.content, TRUNCATED_INPUT_MESSAGE);
    assert.equal(result!.is_error, true);
    assert.ok(!existsSync(join(h.root, 'big.txt')));
    assert.deepEqual(startedCalls(h.events), []);
  });

  it('plain text cut off at max_tokens asks the model to continue', async () => {
    h = await harness({ script: [reply([{ type: 'text', text: 'half an ans' }], 'max_tokens'), answer('wer')] });
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    const messages = requestMessages(h.fake, 1) as { role: string; content: { text: string }[] }[];
    assert.equal(messages[2]!.content[0]!.text, CONTINUE_AFTER_MAX_TOKENS);
  });

  it('pause_turn is sent back as is and the loop continues; refusal ends the run failed', async () => {
    h = await harness({
      script: [
        reply([{ type: 'text', text: 'thinking' }], 'pause_turn'),
        reply([{ type: 'text', text: 'I will not do that.' }], 'refusal'),
      ],
    });
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.reason!, /refused[\s\S]*I will not do that/);
    const messages = requestMessages(h.fake, 1) as { role: string }[];
    assert.deepEqual(
      messages.map((m) => m.role),
      ['user', 'assistant'],
    );
    assert.equal((await h.store.readRun(outcome.runId)).status, 'failed');
  });

  it('invalid tool input becomes an is_error result, never a crash', async () => {
    h = await harness({ script: [reply([toolUse('t1', 'read_file', { file: 3 }), toolUse('t2', 'nope', {})]), answer('ok')] });
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    const [bad, unknown] = lastToolResults(h.fake, 1);
    assert.equal(bad!.is_error, true);
    assert.match(bad!.content, /invalid input for read_file[\s\S]*path/);
    assert.match(unknown!.content, /unknown tool "nope"/);
    const state = await h.store.readRun(outcome.runId);
    assert.deepEqual(
      state.ledger.map((e) => [e.status, e.reason]),
      [
        ['failed', 'invalid input'],
        ['failed', 'unknown tool'],
      ],
    );
  });

  it('a turn limit still stops the run after repeated crash-resume', async () => {
    let n = 0;
    h = await harness({ script: () => reply([toolUse(`t${++n}`, 'list_dir', {})]) });
    const settings = { ...SETTINGS, maxTurns: 3 };
    let outcome = await h.runtime({ store: crashingStore(h.store, atSavePoint('after_model')) }).start({ task: 'x', settings });
    for (let i = 0; i < 6 && outcome.reason !== undefined && !/turn limit/.test(outcome.reason); i++) {
      outcome = await h.runtime({ store: crashingStore(h.store, atSavePoint('after_model')) }).resume(outcome.runId);
    }
    assert.equal(outcome.status, 'paused');
    assert.match(outcome.reason!, /turn limit reached \(3 of 3/);
    assert.equal(h.fake.requests.length, 3);
    const again = await h.runtime().resume(outcome.runId);
    assert.match(again.reason!, /turn limit reached/);
    assert.equal(h.fake.requests.length, 3);
    assert.equal((await h.store.readRun(outcome.runId)).budget.turns, 3);
  });

  it('a token limit still stops the run after repeated crash-resume', async () => {
    let n = 0;
    h = await harness({ script: () => reply([toolUse(`t${++n}`, 'list_dir', {})], 'tool_use', { input_tokens: 150, output_tokens: 50 }) });
    const settings = { ...SETTINGS, maxTokens: 500 };
    let outcome = await h.runtime({ store: crashingStore(h.store, atToolResultsMessage()) }).start({ task: 'x', settings });
    for (let i = 0; i < 6 && !/token limit/.test(outcome.reason ?? ''); i++) {
      // The first tool_result message is the reconciled one; crash after the next model call.
      outcome = await h.runtime({ store: crashingStore(h.store, atToolResultsMessage(2)) }).resume(outcome.runId);
    }
    assert.match(outcome.reason!, /token limit reached \(600 of 500 tokens\)/);
    assert.equal(h.fake.requests.length, 3);
  });

  it('a store error (ENOSPC) pauses the run with a clear error; resume continues', async () => {
    h = await harness({ files: { 'a.txt': 'A' }, script: byTurn([reply([toolUse('t1', 'read_file', { path: 'a.txt' })]), answer('ok')]) });
    const full = crashingStore(h.store, atSavePoint('tool_started'));
    const failing = {
      ...full,
      openWriter: full.openWriter,
      createRun: async (run: never) => {
        const writer = await full.createRun(run);
        return {
          ...writer,
          runId: writer.runId,
          holderId: writer.holderId,
          append: async (records: never) => {
            try {
              return await writer.append(records);
            } catch {
              throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
            }
          },
        };
      },
    };
    const first = await h.runtime({ store: failing as never }).start({ task: 'x', settings: SETTINGS });
    assert.equal(first.status, 'paused');
    assert.match(first.reason!, /storage error: ENOSPC: no space left on device/);
    assert.deepEqual(startedCalls(h.events), [], 'nothing ran without its started record');
    const second = await h.runtime().resume(first.runId);
    assert.equal(second.status, 'completed');
  });

  it('a lost lease stops writing at once', async () => {
    h = await harness({ script: [answer('ok')] });
    const store = crashingStore(h.store, () => false);
    const lost = {
      ...store,
      createRun: async (run: never) => {
        const writer = await store.createRun(run);
        let n = 0;
        return {
          ...writer,
          runId: writer.runId,
          holderId: writer.holderId,
          append: async (records: never) => {
            if (++n > 1) throw new StoreError('the lease of this run was taken over by another writer', 'lease_lost');
            return writer.append(records);
          },
        };
      },
    };
    const outcome = await h.runtime({ store: lost as never }).start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'paused');
    assert.match(outcome.reason!, /lease lost/);
    assert.equal((await h.records(outcome.runId)).filter((r) => r.type === 'status').length, 0);
  });
});
