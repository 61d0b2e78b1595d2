import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResumeError } from '../../../src/core/runtime/errors';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import {
  answer,
  byTurn,
  harness,
  lastToolResults,
  reply,
  requestMessages,
  ScriptedApprover,
  SETTINGS,
  toolUse,
  type Harness,
} from './harness';

const lastMessage = (h: Harness, n: number) => (requestMessages(h.fake, n) as { role: string; content: unknown }[]).at(-1);

describe('a new instruction for a stopped run', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('continues a completed run in the same history: a durable record and save point, then a new answer', async () => {
    h = await harness({ store: 'file', script: byTurn([answer('first answer'), answer('second answer')]) });
    const done = await h.runtime().start({ task: 'say something', settings: SETTINGS });
    assert.equal(done.status, 'completed');
    const again = await h.runtime().continue(done.runId, 'now say more', new AbortController().signal, { moreTurns: 5 });
    assert.equal(again.status, 'completed', again.reason);
    assert.deepEqual(lastMessage(h, 1), { role: 'user', content: [{ type: 'text', text: 'now say more' }] });
    const records = await h.records(done.runId);
    const instruction = records.find((r) => r.type === 'instruction');
    assert.ok(instruction && instruction.type === 'instruction');
    assert.equal(instruction.after, 'completed');
    assert.ok(records.some((r) => r.type === 'checkpoint' && r.label === 'instruction'));
    const state = await h.store.readRun(done.runId);
    assert.equal(state.status, 'completed');
    const view = buildRunView(state, new Map(), false);
    const step = view.steps.find((s) => s.instruction !== undefined && s.label === 'instruction');
    assert.equal(step?.instruction, 'now say more');
    assert.equal(view.steps.at(-1)?.text, 'second answer');
  });

  it('names the files someone else changed since the agent wrote them, apart from the person’s words', async () => {
    h = await harness({
      store: 'file',
      script: byTurn([reply([toolUse('t0', 'write_file', { path: 'a.txt', content: 'agent\n' })]), answer('wrote it'), answer('ok')]),
    });
    const done = await h.runtime().start({ task: 'write a.txt', settings: SETTINGS });
    assert.equal(done.status, 'completed', done.reason);
    writeFileSync(join(h.root, 'a.txt'), 'mine\n');
    const again = await h.runtime().continue(done.runId, 'go on', new AbortController().signal, { moreTurns: 5 });
    assert.equal(again.status, 'completed', again.reason);
    const content = lastMessage(h, 2)?.content as { type: string; text: string }[];
    assert.equal(content.length, 2);
    assert.match(content[0]!.text, /^\[files changed\]\n[^]*- a\.txt: edited since the agent wrote it$/);
    assert.deepEqual(content[1], { type: 'text', text: 'go on' });
    const view = buildRunView(await h.store.readRun(done.runId), new Map(), false);
    const step = view.steps.find((s) => s.label === 'instruction');
    assert.equal(step?.instruction, 'go on', 'the note is not shown as the person’s words');
    assert.match(step?.told ?? '', /a\.txt: edited since the agent wrote it/);
  });

  it('raises a turn limit the run had reached by the stated amount, and says so', async () => {
    h = await harness({ store: 'file', script: byTurn([reply([toolUse('t0', 'list_dir', { path: '.' })]), answer('done')]) });
    const paused = await h.runtime().start({ task: 'list', settings: { ...SETTINGS, maxTurns: 1 } });
    assert.equal(paused.status, 'paused');
    const done = await h.runtime().continue(paused.runId, 'finish up', new AbortController().signal, { moreTurns: 3 });
    assert.equal(done.status, 'completed', done.reason);
    const state = await h.store.readRun(paused.runId);
    assert.equal(state.budget.maxTurns, 4);
    assert.ok(state.notes.some((n) => n.text === 'Turn limit raised by 3 (1 -> 4) for the new instruction.'));
    assert.equal(
      buildRunView(state, new Map(), false).steps.find((s) => s.label === 'instruction')?.raised,
      'Turn limit raised by 3 (1 -> 4) for the new instruction.',
    );
  });

  it('an instruction cut short by a stop is kept: resume gives it to the model', async () => {
    h = await harness({ store: 'file', script: byTurn([answer('first'), answer('after the stop')]) });
    const done = await h.runtime().start({ task: 'go', settings: SETTINGS });
    const stop = new AbortController();
    stop.abort();
    const stopped = await h.runtime().continue(done.runId, 'and then?', stop.signal, { moreTurns: 5 });
    assert.equal(stopped.status, 'paused');
    assert.equal(h.fake.requests.length, 1, 'nothing was asked before the stop');
    const resumed = await h.runtime().resume(done.runId);
    assert.equal(resumed.status, 'completed', resumed.reason);
    const sent = requestMessages(h.fake, 1) as { role: string; content: { text?: string }[] }[];
    assert.ok(
      sent.slice(-2).some((m) => m.role === 'user' && m.content[0]?.text === 'and then?'),
      'the instruction is in the history the model gets after the resume',
    );
  });

  it('refuses an empty instruction and writes nothing', async () => {
    h = await harness({ store: 'file', script: byTurn([answer('first')]) });
    const done = await h.runtime().start({ task: 'go', settings: SETTINGS });
    const before = (await h.records(done.runId)).length;
    await assert.rejects(h.runtime().continue(done.runId, '   ', new AbortController().signal, { moreTurns: 5 }), ResumeError);
    assert.equal((await h.records(done.runId)).length, before);
  });
});

describe('a denial with a reason', () => {
  it('passes the reason to the model in the denied result', async () => {
    const approver = new ScriptedApprover();
    const denyWithReason = async () => ({ decision: 'deny' as const, reason: 'not on this branch' });
    approver.approve = denyWithReason as unknown as ScriptedApprover['approve'];
    const h = await harness({
      store: 'file',
      approver,
      script: byTurn([reply([toolUse('t0', 'run_command', { command: 'rm -rf build' })]), answer('ok')]),
    });
    try {
      const done = await h.runtime().start({ task: 'clean', settings: SETTINGS });
      assert.equal(done.status, 'completed', done.reason);
      const [result] = lastToolResults(h.fake, 1);
      assert.equal(result?.is_error, true);
      assert.match(String(result?.content), /The user's reason: not on this branch$/);
    } finally {
      await h.close();
    }
  });
});
