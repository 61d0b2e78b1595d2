import { strict as assert } from 'node:assert';
import type { MessageParam } from '../../../src/core/model/messages';
import { silentLog } from '../../../src/core/ports';
import { CONTINUE_AFTER_EMPTY, NO_ANSWER_REASON } from '../../../src/core/runtime/loop';
import { buildRequest } from '../../../src/core/runtime/request';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { RestoreActions } from '../../../src/host/vscode/restore/restore-actions';
import { assertEveryRequestValid } from '../../support/valid-requests';
import { answer, harness, reply, requestMessages, SETTINGS, toolUse, type Harness } from './harness';

// An empty answer (no block, or only text without words; "Handling stop reasons" documents it,
// "particularly after tool results") is never stored: the model is asked once more in a user
// turn of its own, and a second empty answer stops the run with words, still continuable.

const empty = (stop = 'end_turn') => reply([], stop);
const readA = reply([toolUse('t1', 'read_file', { path: 'a.txt' })]);
const never = new AbortController().signal;

async function assistantMessages(h: Harness, runId: string): Promise<MessageParam[]> {
  return (await h.store.readRun(runId)).messages.filter((m) => m.role === 'assistant');
}

function isEmptyStored(message: MessageParam): boolean {
  return Array.isArray(message.content) && message.content.every((b) => b.type === 'text' && String(b.text).trim() === '');
}

describe('empty answers (real SDK, loopback server)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('after tool results: asked once to continue in a user turn of its own, then the run completes', async () => {
    h = await harness({ files: { 'a.txt': 'A' }, script: [readA, empty(), answer('done')] });
    const outcome = await h.runtime().start({ task: 'read a.txt', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    assert.equal(outcome.reason, 'done');
    const asked = requestMessages(h.fake, 2) as { role: string; content: { type: string; text?: string }[] }[];
    assert.deepEqual(
      asked.map((m) => [m.role, m.content.map((b) => b.type).join(',')]),
      [
        ['user', 'text'],
        ['assistant', 'tool_use'],
        ['user', 'tool_result'],
        ['user', 'text'],
      ],
      'the results message is left as it was; the request to go on is a message of its own',
    );
    assert.equal(asked[3]!.content[0]!.text, CONTINUE_AFTER_EMPTY);
    assert.equal((await assistantMessages(h, outcome.runId)).filter(isEmptyStored).length, 0, 'no empty answer stored');
    const usages = (await h.records(outcome.runId)).filter((r) => r.type === 'usage');
    assert.equal(usages.length, 3, 'the empty answer is counted');
    assertEveryRequestValid(h.fake);
  });

  it('empty twice: the run pauses with words, and a new instruction completes it', async () => {
    h = await harness({ files: { 'a.txt': 'A' }, script: [readA, empty(), empty()] });
    const first = await h.runtime().start({ task: 'read a.txt', settings: SETTINGS });
    assert.equal(first.status, 'paused');
    assert.equal(first.reason, NO_ANSWER_REASON);
    assert.equal(first.failure?.kind, 'invalid_response');
    assert.equal(h.fake.requests.length, 3, 'asked again once, not more');
    h.fake.push(answer('done after the instruction'));
    const next = await h.runtime().continue(first.runId, 'Say what a.txt holds.', never, { moreTurns: 5 });
    assert.equal(next.status, 'completed', next.reason);
    assert.equal((await assistantMessages(h, first.runId)).filter(isEmptyStored).length, 0);
    assertEveryRequestValid(h.fake);
  });

  it('empty twice, then resume completes the run; so does a fork from before the empty answers', async () => {
    h = await harness({ files: { 'a.txt': 'A' }, script: [readA, empty(), reply([{ type: 'text', text: ' \n' }], 'end_turn')] });
    const first = await h.runtime().start({ task: 'read a.txt', settings: SETTINGS });
    assert.equal(first.reason, NO_ANSWER_REASON, 'text with no words is an empty answer too');
    h.fake.push(answer('resumed'), answer('forked'));
    const resumed = await h.runtime().resume(first.runId);
    assert.equal(resumed.status, 'completed', resumed.reason);
    assert.equal(resumed.reason, 'resumed');
    const restore = new RestoreActions({
      store: h.store,
      workspace: new NodeWorkspace({ roots: [h.root] }),
      clock: { now: () => Date.now() },
      log: silentLog,
      isRunning: () => false,
    });
    const { fork } = await restore.fork(first.runId, { step: 2 }, 'keep');
    const forked = await h.runtime().resume(fork.runId);
    assert.equal(forked.status, 'completed', forked.reason);
    assert.equal(forked.reason, 'forked');
    assertEveryRequestValid(h.fake);
  });

  it('empty on the first turn: the same treatment', async () => {
    h = await harness({ script: [empty(), answer('hello')] });
    const outcome = await h.runtime().start({ task: 'say hello', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(
      (requestMessages(h.fake, 1) as { role: string }[]).map((m) => m.role),
      ['user', 'user'],
    );
    assertEveryRequestValid(h.fake);
  });

  it('a refusal without words ends the run failed, stores no empty answer, and a new instruction works', async () => {
    h = await harness({ script: [empty('refusal')] });
    const first = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(first.status, 'failed');
    assert.equal(first.reason, 'the model refused to continue');
    assert.equal(h.fake.requests.length, 1, 'a refusal is not asked again');
    h.fake.push(answer('fine'));
    const next = await h.runtime().continue(first.runId, 'Something else, then.', never, { moreTurns: 5 });
    assert.equal(next.status, 'completed', next.reason);
    assertEveryRequestValid(h.fake);
  });

  it('an empty text block beside a tool call is not stored (the API refuses "" in any later request)', async () => {
    h = await harness({
      files: { 'a.txt': 'A' },
      script: [reply([{ type: 'text', text: '' }, toolUse('t1', 'read_file', { path: 'a.txt' })]), answer('ok')],
    });
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'completed', outcome.reason);
    assertEveryRequestValid(h.fake);
  });
});

describe('an empty answer an older version stored', () => {
  it('is left out of the request, unless it is the final message', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'task' },
      { role: 'assistant', content: [] },
      { role: 'user', content: [{ type: 'text', text: 'go on' }] },
    ];
    const session = { run: { settings: SETTINGS } } as never;
    const request = buildRequest(session, createToolRegistry({}), messages, undefined);
    assert.deepEqual(
      request.messages.map((m) => m.role),
      ['user', 'user'],
    );
    const final = buildRequest(session, createToolRegistry({}), messages.slice(0, 2), undefined);
    assert.equal(final.messages.length, 2);
  });
});
