import { strict as assert } from 'node:assert';
import { silentLog } from '../../../src/core/ports';
import { SUMMARY_REQUEST } from '../../../src/core/runtime/compaction';
import { planNote, PLAN_NOTE_MARKER, type Plan } from '../../../src/core/store/plan';
import { BUILTIN_TOOLS, createToolRegistry } from '../../../src/core/tools/registry';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { RestoreActions } from '../../../src/host/vscode/restore/restore-actions';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { RunView } from '../../../src/protocol/viewModel';
import type { Responder, ResponseStep } from '../../support/fake-anthropic/server';
import { assertEveryRequestValid } from '../../support/valid-requests';
import {
  answer,
  byTurn,
  harness,
  lastToolResults,
  recoveryNoteOf,
  ScriptedApprover,
  reply,
  requestMessages,
  SETTINGS,
  toolUse,
  type Harness,
} from './harness';

// The model's plan (update_plan) is the input of its latest succeeded call in the active history:
// a fork, a fork of a fork and a restore have the plan as it was at their point; a compaction says
// it again at the end of the conversation; a run keeps the tool list it started with.

const plan = (...steps: [string, Plan['steps'][number]['status']][]): Plan => ({
  steps: steps.map(([step, status]) => ({ step, status })),
});
const A = plan(['read a.txt', 'in_progress'], ['answer', 'pending']);
const B = plan(['read a.txt', 'done'], ['answer', 'in_progress']);
const C = plan(['read a.txt', 'done'], ['answer differently', 'in_progress']);
const setPlan = (id: string, p: Plan): ResponseStep => reply([toolUse(id, 'update_plan', p)]);

const actions = (h: Harness) =>
  new RestoreActions({
    store: h.store,
    workspace: new NodeWorkspace({ roots: [h.root] }),
    clock: { now: () => Date.now() },
    log: silentLog,
    isRunning: () => false,
  });

for (const kind of ['memory', 'file'] as const) {
  describe(`the plan at a point (${kind} store)`, () => {
    let h: Harness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it('a fork, a fork of a fork and a restored checkpoint have the plan as it was there; the Timeline pins the newest', async () => {
      // Steps: 1 plan A, 2 read, 3 plan B (the parent) or plan C (its fork), 4 answer.
      let third = setPlan('p2', B);
      const script: Responder = (request, index) =>
        byTurn([setPlan('p1', A), reply([toolUse('r1', 'read_file', { path: 'a.txt' })]), third, answer('done')])(request, index);
      // The call a restore went back over is asked about before it runs again.
      const approver = new ScriptedApprover(['allow_once']);
      h = await harness({ store: kind, files: { 'a.txt': 'one\n' }, script, approver });
      const parent = await h.runtime().start({ task: 'plan and read', settings: SETTINGS });
      assert.equal(parent.status, 'completed', parent.reason);
      const parentState = await h.store.readRun(parent.runId);
      assert.deepEqual(parentState.plan, B);
      const view = buildRunView(parentState, new Map(), false);
      assert.deepEqual(view.header.plan, B.steps);
      assert.deepEqual(RunView.parse(view).header.plan, B.steps, 'the webview takes the header as sent');
      assert.deepEqual((await h.store.readResumeState(parent.runId)).plan, B);

      const { fork } = await actions(h).fork(parent.runId, { step: 3 }, 'keep');
      assert.deepEqual((await h.store.readRun(fork.runId)).plan, A, 'the fork at step 3 has the plan step 1 set');
      assert.deepEqual((await h.store.readResumeState(fork.runId)).plan, A);
      third = setPlan('p3', C);
      assert.equal((await h.runtime().resume(fork.runId)).status, 'completed');
      assert.deepEqual((await h.store.readRun(fork.runId)).plan, C);
      assert.deepEqual((await h.store.readRun(parent.runId)).plan, B, 'the parent keeps its own');

      const early = await actions(h).fork(fork.runId, { step: 2 }, 'keep');
      const late = await actions(h).fork(fork.runId, { step: 4 }, 'keep');
      assert.deepEqual(
        (await h.store.readRun(early.fork.runId)).plan,
        A,
        "a fork of a fork before its parent's own plan: the grandparent's",
      );
      assert.deepEqual((await h.store.readRun(late.fork.runId)).plan, C, "a fork of a fork after it: its parent's");
      assert.deepEqual((await h.store.readResumeState(late.fork.runId)).plan, C);
      const first = await actions(h).fork(parent.runId, { step: 1 }, 'keep');
      assert.equal((await h.store.readRun(first.fork.runId)).plan, undefined, 'before any plan: none');
      assert.equal(buildRunView(await h.store.readRun(first.fork.runId), new Map(), false).header.plan, undefined);

      // Restoring the session to the point after step 3's answer, before its update_plan ran.
      const point = parentState.checkpoints.find((c) => c.stepId === 3 && c.label === 'after_model')!;
      assert.deepEqual((await h.store.readRun(parent.runId, { atCheckpoint: point.checkpointId })).plan, A);
      const restored = await actions(h).restoreCheckpoint(parent.runId, point.checkpointId, 'session');
      assert.deepEqual((await h.store.readRun(restored.fork!.runId)).plan, A);
      third = setPlan('p2', B);
      assert.equal((await h.runtime().resume(restored.fork!.runId)).status, 'completed');
      assert.deepEqual((await h.store.readRun(restored.fork!.runId)).plan, B, 'the call it stood before ran on resume');
      assert.deepEqual(
        approver.approvals.map((a) => a.callId),
        ['p2'],
      );
      assertEveryRequestValid(h.fake);
    });
  });
}

const FILE = `${'x'.repeat(59)}\n`.repeat(40);

describe('the plan after a compaction', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('is said again at the end of the conversation after each compaction, and survives the one that drops its call', async function () {
    this.timeout(60_000);
    let step = 0;
    const script: Responder = (request) => {
      const messages = (request.body as { messages: { content: unknown }[] }).messages;
      const last = messages.at(-1)!.content;
      if (Array.isArray(last) && (last.at(-1) as { text?: string }).text === SUMMARY_REQUEST)
        return answer('Summary: a.txt read, plan set.');
      step += 1;
      if (step === 1) return setPlan('p1', A);
      if (step > 30) return answer('All done.');
      return reply([toolUse(`t${step}`, 'read_file', { path: 'a.txt' })]);
    };
    h = await harness({ store: 'file', files: { 'a.txt': FILE }, script, fake: { promptCaching: true } });
    const runtime = h.runtime();
    const after: number[] = [];
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'compacted') after.push(h!.fake.requests.length);
    });
    const done = await runtime.start({ task: 'read', settings: { ...SETTINGS, maxTurns: 200, maxContextTokens: 6_000 } });
    assert.equal(done.status, 'completed', done.reason);
    const records = await h.records(done.runId);
    assert.ok(
      records.some((r) => r.type === 'compaction' && r.kind === 'summary'),
      'a summary dropped the call that set the plan',
    );
    assert.ok(after.length >= 2);
    for (const n of after) {
      const messages = requestMessages(h.fake, n) as { content: { type: string; content?: { text?: string }[] }[] }[];
      const results = messages.at(-1)!.content;
      assert.equal(results.at(-1)!.type, 'tool_result', `request ${n} ends with the tool results`);
      assert.equal(results.at(-1)!.content?.at(-1)?.text, planNote(A), `request ${n}: the note closes the last result`);
      if (n === after[0]) assert.equal(JSON.stringify(messages).split(PLAN_NOTE_MARKER).length - 1, 1, 'said once, at the end');
    }
    assert.ok(!JSON.stringify(requestMessages(h.fake, after[0]! - 1)).includes(PLAN_NOTE_MARKER), 'not said before a compaction');
    const state = await h.store.readRun(done.runId);
    assert.ok(!JSON.stringify(state.messages).includes('"p1"'), 'the call is no longer in the active history');
    assert.deepEqual(state.plan, A);
    assert.deepEqual((await h.store.readResumeState(done.runId)).plan, A, "the compaction's snapshot carries it");
    assertEveryRequestValid(h.fake);
  });
});

describe('update_plan and the tool list a run started with', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const offered = (n: number) => ((h!.fake.requests[n]!.body as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);

  it('an older run resumed by this version is not offered update_plan (the note says so); a new run is', async () => {
    h = await harness({
      files: { 'a.txt': 'one\n' },
      script: byTurn([reply([toolUse('r1', 'read_file', { path: 'a.txt' })]), answer('done')]),
    });
    const older = createToolRegistry({ tools: BUILTIN_TOOLS.filter((t) => t.name !== 'update_plan') });
    const controller = new AbortController();
    const runtime = h.runtime({ tools: older });
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'tool_finished') controller.abort();
    });
    const paused = await runtime.start({ task: 'read', settings: SETTINGS }, controller.signal);
    assert.equal(paused.status, 'paused');
    assert.ok(!offered(0).includes('update_plan'));
    const sent = h.fake.requests.length;
    const done = await h.runtime().resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    assert.deepEqual(offered(sent), offered(0), 'the resumed run sends the tools it started with');
    assert.match(recoveryNoteOf(h.fake, sent) ?? '', /new, not offered in this run: update_plan/);

    const fresh = await h.runtime().start({ task: 'read', settings: SETTINGS });
    assert.equal(fresh.status, 'completed', fresh.reason);
    assert.ok(offered(h.fake.requests.length - 1).includes('update_plan'), 'a new run is offered update_plan');
  });

  it('an older run whose model calls update_plan anyway gets "unknown tool": nothing the model says widens its tools', async () => {
    h = await harness({
      files: { 'a.txt': 'one\n' },
      script: byTurn([
        reply([toolUse('r1', 'read_file', { path: 'a.txt' })]),
        reply([toolUse('p1', 'update_plan', plan(['Read a.txt', 'in_progress']))]),
        answer('done'),
      ]),
    });
    const older = createToolRegistry({ tools: BUILTIN_TOOLS.filter((t) => t.name !== 'update_plan') });
    const controller = new AbortController();
    const runtime = h.runtime({ tools: older });
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'tool_finished') controller.abort();
    });
    const paused = await runtime.start({ task: 'read', settings: SETTINGS }, controller.signal);
    assert.equal(paused.status, 'paused');
    const done = await h.runtime().resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    const results = lastToolResults(h.fake, h.fake.requests.length - 1);
    assert.equal(results.length, 1);
    assert.equal(results[0]!.is_error, true);
    assert.match(String(results[0]!.content), /unknown tool "update_plan"/);
    const state = await h.store.readRun(paused.runId);
    assert.equal(state.plan, undefined, 'no plan was recorded');
  });
});
