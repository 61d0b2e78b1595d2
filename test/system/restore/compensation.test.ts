import { strict as assert } from 'node:assert';
import { effectsToUndo, UNDO_FACTS_MARKER, undoInstruction } from '../../../src/core/restore/compensation';
import { ResumeError } from '../../../src/core/runtime/errors';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import type { Responder } from '../../support/fake-anthropic/server';
import { assertEveryRequestValid } from '../../support/valid-requests';
import {
  answer,
  harness,
  readText,
  reply,
  requestMessages,
  ScriptedApprover,
  SETTINGS,
  toolUse,
  type Harness,
} from '../../unit/runtime/harness';

// Undoing external effects: a tool's declared inverse, filled in strictly from the original call,
// and the calls an "undo these" instruction makes, linked in the ledger to the calls they undo.

const script: Responder = (request) => {
  const messages = (request.body as { messages: { role: string }[] }).messages;
  const undoing = JSON.stringify(messages).includes('Undo the external effects');
  const turn = messages.filter((m) => m.role === 'assistant').length;
  if (!undoing) return turn === 0 ? reply([toolUse('t1', 'run_command', { command: 'echo made > made.txt' })]) : answer('made it');
  if (turn === 2)
    return reply([toolUse('t2', 'read_file', { path: 'made.txt' }), toolUse('t3', 'run_command', { command: 'rm made.txt' })]);
  return answer('removed made.txt');
};

describe('compensation: "ask the agent to undo these" through the runtime', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('the instruction names the call with its input and result; its calls with an effect are approved as usual and linked to it', async () => {
    h = await harness({ store: 'file', script, approver: new ScriptedApprover(['allow_once', 'allow_once']) });
    const done = await h.runtime().start({ task: 'make a file', settings: SETTINGS });
    assert.equal(done.status, 'completed', done.reason);
    assert.equal(readText(h.root, 'made.txt'), 'made\n');

    const effects = effectsToUndo(await h.store.readRun(done.runId), ['t1']);
    assert.deepEqual(effects[0]!.input, { command: 'echo made > made.txt' });
    const text = undoInstruction(effects);
    assert.match(text, /run_command \(call t1\)/);
    assert.doesNotMatch(text, /echo made/, "the person's words name the call; its input and result go as data");
    const first = h.fake.requests.length;
    const undone = await h.runtime().continue(done.runId, text, new AbortController().signal, { moreTurns: 5, undo: ['t1'] });
    assert.equal(undone.status, 'completed', undone.reason);
    assert.throws(() => readText(h!.root, 'made.txt'), 'the agent removed it');
    const blocks = (requestMessages(h.fake, first).at(-1) as { content: { type: string; text: string }[] }).content;
    assert.match(blocks.at(-2)!.text, /^Undo the external effects/);
    const data = blocks.at(-1)!.text;
    assert.ok(data.startsWith(UNDO_FACTS_MARKER));
    const facts = JSON.parse(data.slice(UNDO_FACTS_MARKER.length)) as { call: string; input: string; result: string }[];
    assert.deepEqual(
      facts.map((f) => [f.call, f.input]),
      [['t1', '{"command":"echo made > made.txt"}']],
    );
    assert.match(facts[0]!.result, /exit code 0/);
    assert.deepEqual(
      h.approver.approvals.map((a) => a.callId),
      ['t1', 't3'],
      'the compensating command waited for approval like any command',
    );
    assertEveryRequestValid(h.fake);

    const state = await h.store.readRun(done.runId);
    const byId = new Map(state.ledger.map((e) => [e.callId, e]));
    assert.deepEqual(byId.get('t3')?.compensates, ['t1']);
    assert.equal(byId.get('t2')?.compensates, undefined, 'a read changes nothing: it compensates nothing');
    const calls = buildRunView(state, new Map(), false).steps.flatMap((s) => s.calls);
    assert.deepEqual(calls.find((c) => c.callId === 't3')?.undoes, ['run_command (t1)']);
    assert.deepEqual(calls.find((c) => c.callId === 't1')?.undoneBy, ['run_command (t3)']);
  });

  it('asking to undo a call without an external effect is refused and nothing is written', async () => {
    h = await harness({ store: 'file', script, approver: new ScriptedApprover(['allow_once']) });
    const done = await h.runtime().start({ task: 'make a file', settings: SETTINGS });
    const before = await h.store.readRecords(done.runId);
    await assert.rejects(
      h.runtime().continue(done.runId, 'undo', new AbortController().signal, { moreTurns: 5, undo: ['no-such-call'] }),
      (e: Error) => e instanceof ResumeError && /no external effect to undo/.test(e.message),
    );
    assert.equal((await h.store.readRecords(done.runId)).length, before.length);
    assert.throws(() => effectsToUndo({ ledger: [], messages: [] }, ['x']), /no effect outside the files/);
  });
});
