import { strict as assert } from 'node:assert';
import { ResumeError } from '../../../src/core/runtime/errors';
import { parseCli, resumeOptionsOf } from '../../../src/host/cli/args';
import { answer, byTurn, harness, reply, SETTINGS, toolUse, type Harness } from './harness';

const steps = [
  reply([toolUse('t0', 'list_dir', { path: '.' })]),
  reply([toolUse('t1', 'list_dir', { path: '.' })]),
  reply([toolUse('t2', 'list_dir', { path: '.' })]),
  answer('done'),
];

describe('raising the limits of a paused run', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a run paused at its turn limit continues with more turns; counters go on, the raise is in the journal', async () => {
    h = await harness({ store: 'file', script: byTurn(steps) });
    const paused = await h.runtime().start({ task: 'list', settings: { ...SETTINGS, maxTurns: 2 } });
    assert.equal(paused.status, 'paused');
    assert.deepEqual(paused.limit, { kind: 'turns', max: 2 });
    // Resuming without a raise pauses again at once: the limit holds across resumes.
    const again = await h.runtime().resume(paused.runId);
    assert.equal(again.status, 'paused');
    assert.equal(h.fake.requests.length, 2);
    const done = await h.runtime().resume(paused.runId, undefined, { raise: { maxTurns: 4 } });
    assert.equal(done.status, 'completed', done.reason);
    const state = await h.store.readRun(paused.runId);
    assert.equal(state.budget.turns, 4, 'turns were counted on, not reset');
    assert.equal(state.budget.maxTurns, 4);
    const records = await h.records(paused.runId);
    const limits = records.filter((r) => r.type === 'limits');
    assert.equal(limits.length, 1);
    assert.deepEqual({ ...limits[0], v: 0, at: 0, seq: 0 }, { v: 0, at: 0, seq: 0, type: 'limits', maxTurns: 4, before: { maxTurns: 2 } });
  });

  it('a raise survives a stop right after it: the next resume keeps the raised limit', async () => {
    h = await harness({ store: 'file', script: byTurn(steps) });
    const paused = await h.runtime().start({ task: 'list', settings: { ...SETTINGS, maxTurns: 1, maxTokens: 100_000 } });
    assert.equal(paused.status, 'paused');
    const cancelled = new AbortController();
    cancelled.abort();
    const stopped = await h.runtime().resume(paused.runId, cancelled.signal, { raise: { maxTurns: 10, maxTokens: 200_000 } });
    assert.equal(stopped.status, 'paused');
    const done = await h.runtime().resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    const state = await h.store.readRun(paused.runId);
    assert.equal(state.budget.maxTurns, 10);
    assert.equal(state.budget.maxTokens, 200_000);
  });

  it('a cost limit on a model without a price is said to be unenforceable (a warning note and the log), never silently inert', async () => {
    h = await harness({ script: byTurn([answer('done'), answer('done')]) });
    const logged: string[] = [];
    const log = { log: (level: string, message: string) => void (level === 'warn' && logged.push(message)) };
    const unpriced = await h.runtime({ log }).start({ task: 't', settings: { ...SETTINGS, model: 'acme-model-7', maxCostUsd: 2 } });
    const warnings = (await h.records(unpriced.runId)).filter((r) => r.type === 'note' && r.kind === 'warning');
    assert.equal(warnings.length, 1);
    assert.match(JSON.stringify(warnings[0]), /cost limit \(\$2\.00\) cannot be enforced for model acme-model-7/);
    assert.equal(logged.length, 1);
    const priced = await h.runtime({ log }).start({ task: 't', settings: { ...SETTINGS, maxCostUsd: 2 } });
    assert.equal((await h.records(priced.runId)).filter((r) => r.type === 'note').length, 0, 'a priced model gets no warning');
  });

  it('a value that does not raise its limit is refused and changes nothing', async () => {
    h = await harness({ store: 'file', script: byTurn(steps) });
    const paused = await h.runtime().start({ task: 'list', settings: { ...SETTINGS, maxTurns: 2 } });
    const before = (await h.records(paused.runId)).length;
    await assert.rejects(
      h.runtime().resume(paused.runId, undefined, { raise: { maxTurns: 2 } }),
      (e: unknown) => e instanceof ResumeError && e.code === 'invalid' && /maxTurns 2 does not raise the limit \(now 2\)/.test(e.message),
    );
    assert.equal((await h.records(paused.runId)).length, before);
  });

  it('resume --max-turns and friends become the raise', () => {
    const options = parseCli(['resume', '--workspace', 'w', '--max-turns', '80', '--max-cost-usd', '2.5', '--max-context-tokens', '50000']);
    assert.deepEqual(resumeOptionsOf(options), { raise: { maxTurns: 80, maxCostUsd: 2.5 }, maxContextTokens: 50000 });
    assert.throws(() => parseCli(['resume', '--workspace', 'w', '--max-cost-usd', '0']), /--max-cost-usd must be a positive number/);
    assert.throws(() => parseCli(['resume', '--workspace', 'w', '--thinking', 'adaptive']), /--thinking is not an option of resume/);
  });
});

describe('a deprecated model', () => {
  it('gives a warning naming its replacement, in the log and in the journal', async () => {
    const h = await harness({ script: [answer('ok')] });
    try {
      const warnings: string[] = [];
      const log = { log: (level: string, message: string) => void (level === 'warn' && warnings.push(message)) };
      const outcome = await h.runtime({ log }).start({ task: 't', settings: { ...SETTINGS, model: 'claude-sonnet-4-5-20250929' } });
      assert.equal(outcome.status, 'completed');
      assert.deepEqual(warnings, [
        'model claude-sonnet-4-5-20250929 is deprecated and reaches end of life on November 30th, 2026; use claude-sonnet-5-5 instead',
      ]);
      const notes = (await h.records(outcome.runId)).filter((r) => r.type === 'note');
      assert.equal(notes.length, 1);
      assert.match(notes[0]!.type === 'note' ? notes[0]!.text : '', /use claude-sonnet-5-5 instead/);
    } finally {
      await h.close();
    }
  });
});
