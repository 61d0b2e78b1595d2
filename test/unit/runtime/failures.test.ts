import { strict as assert } from 'node:assert';
import { createAnthropicProvider } from '../../../src/core/model/anthropic';
import type { Log } from '../../../src/core/ports';
import { HostClosing } from '../../../src/core/runtime/failure';
import { describeFailure, failureLine } from '../../../src/words/failure-words';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { answer, byTurn, closingAtFirstWrite, harness, readText, reply, SETTINGS, toolUse, type Harness } from './harness';

// A run that stops early records why as a kind (the status record's `failure`), so every host
// words it the same; a refused request (400) is never sent again by itself and is logged as a defect.

function capturingLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  return { lines, log: (level, message) => void lines.push(`${level}: ${message}`) };
}

describe('runtime failures: recorded by kind, worded once', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a refused request (400) pauses once with the API message, is not retried, and the log names the rule', async () => {
    const rule = 'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1';
    h = await harness({ script: [{ fault: 'status', status: 400, message: rule }, answer('never asked')] });
    const log = capturingLog();
    const outcome = await h.runtime({ log }).start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'paused');
    assert.deepEqual(outcome.failure, { kind: 'refused', status: 400, message: rule });
    assert.equal(h.fake.requests.length, 1, 'a refused request is sent once');
    const state = await h.store.readRun(outcome.runId);
    assert.deepEqual(state.failure, outcome.failure, 'the run records the failure, not only the outcome');
    const words = describeFailure(state.failure!);
    assert.equal(words.title, `The request was refused: ${rule}`);
    assert.match(words.detail!, /resuming sends the same request/);
    assert.ok(
      log.lines.some((l) => l.startsWith('error:') && l.includes(rule)),
      `the log names the rule: ${log.lines.join('\n')}`,
    );
  });

  it('a refused key (401) is "The API key was refused" with Set API Key, and the key never shows', async () => {
    h = await harness({ script: [{ fault: 'status', status: 401, message: 'invalid x-api-key' }] });
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    const failure = (await h.store.readRun(outcome.runId)).failure!;
    assert.equal(failure.kind, 'auth');
    const words = describeFailure(failure);
    assert.equal(words.title, 'The API key was refused');
    assert.deepEqual(words.actions, ['set_key', 'retry']);
    assert.equal(failureLine(failure), 'The API key was refused — invalid x-api-key (HTTP 401)');
    assert.ok(!JSON.stringify(failure).includes('sk-test-key'));
  });

  it('no connection is "Could not reach the API" with Retry', async () => {
    h = await harness({ script: [answer('fine')] });
    const url = h.fake.url;
    await h.fake.close();
    const model = createAnthropicProvider({ apiKey: 'k', baseURL: url, maxRetries: 0 });
    const outcome = await h.runtime({ model }).start({ task: 'x', settings: SETTINGS });
    const failure = (await h.store.readRun(outcome.runId)).failure!;
    assert.equal(failure.kind, 'network');
    assert.equal(describeFailure(failure).title, 'Could not reach the API');
    assert.deepEqual(describeFailure(failure).actions, ['retry']);
  });

  it('a turn limit is "Turn limit reached" with Raise to…, and the limit it stopped at', async () => {
    let n = 0;
    h = await harness({ script: () => reply([toolUse(`t${++n}`, 'list_dir', {})]) });
    const outcome = await h.runtime().start({ task: 'x', settings: { ...SETTINGS, maxTurns: 2 } });
    const failure = (await h.store.readRun(outcome.runId)).failure!;
    assert.equal(failure.kind, 'limit');
    assert.deepEqual(failure.limit, { kind: 'turns', max: 2 });
    assert.deepEqual(describeFailure(failure), { title: 'Turn limit reached', detail: '2 of 2 model calls', actions: ['raise_limit'] });
  });

  it('a window that closes mid-run records the run interrupted, not cancelled; a Stop is no failure', async () => {
    h = await harness({ script: [answer('never asked')] });
    const closing = new AbortController();
    const runtime = h.runtime();
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'before_model') closing.abort(new HostClosing());
    });
    const outcome = await runtime.start({ task: 'x', settings: SETTINGS }, closing.signal);
    const state = await h.store.readRun(outcome.runId);
    assert.equal(state.status, 'interrupted');
    assert.equal(state.failure?.kind, 'interrupted');
    assert.deepEqual(describeFailure(state.failure!).actions, ['resume']);

    const stop = new AbortController();
    stop.abort();
    const cancelled = await h.runtime().start({ task: 'y', settings: SETTINGS }, stop.signal);
    assert.equal(cancelled.failure, undefined);
    assert.equal((await h.store.readRun(cancelled.runId)).failure, undefined);
  });

  it('a call its closing host could not finish ("Canceled") is no failure: it stays started, and the resume settles it once', async () => {
    h = await harness({
      files: { 'a.txt': 'one\n' },
      script: byTurn([reply([toolUse('t1', 'write_file', { path: 'a.txt', content: 'two\n' })]), answer('ok')]),
    });
    const closing = new AbortController();
    const workspace = closingAtFirstWrite(new NodeWorkspace({ roots: [h.root] }), closing);
    const cut = await h.runtime({ workspace }).start({ task: 'x', settings: SETTINGS }, closing.signal);
    const state = await h.store.readRun(cut.runId);
    assert.equal(state.status, 'interrupted');
    assert.equal(state.ledger[0]!.status, 'started', `no outcome recorded: ${state.ledger[0]!.error ?? ''}`);
    assert.equal(readText(h.root, 'a.txt'), 'one\n');

    const resumed = await h.runtime().resume(cut.runId);
    assert.equal(resumed.status, 'completed');
    assert.equal(readText(h.root, 'a.txt'), 'two\n');
    const after = await h.store.readRun(cut.runId);
    assert.equal(after.ledger[0]!.status, 'succeeded');
    assert.equal(after.patches.length, 1, 'written once');
    assert.equal(h.approver.uncertain.length, 0);
  });
});
