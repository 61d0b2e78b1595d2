import { strict as assert } from 'node:assert';
import { SUMMARY_REQUEST } from '../../../src/core/runtime/compaction';
import type { StoredRecord } from '../../../src/core/store/records';
import type { RecordedRequest, Responder } from '../../support/fake-anthropic/server';
import { assertEveryRequestValid } from '../../support/valid-requests';
import { answer, harness, reply, SETTINGS, toolUse, type Harness } from './harness';

// Runs on the default model (Claude Sonnet 5.5) against the fake in that model's shape: signed
// thinking blocks, the words between tool calls inside them, and the prefix check as a request
// rule (test/support/fake-anthropic/preserved-thinking.ts). A run stays append-only toward the
// model: no request is refused, through compactions, resumes and instructions.

const DEFAULT_MODEL_SETTINGS = { ...SETTINGS, model: 'claude-sonnet-5-5' };

function isSummaryRequest(request: RecordedRequest): boolean {
  const messages = (request.body as { messages: { content: unknown }[] }).messages;
  return JSON.stringify(messages.at(-1)?.content ?? '').includes(SUMMARY_REQUEST.slice(0, 40));
}

/** `steps` read_file calls, each said in words first, then an answer; summary requests get a summary. */
export function wordsScript(steps: number): Responder {
  let step = 0;
  return (request) => {
    if (isSummaryRequest(request)) return answer(`Summary: read a.txt ${step} times.`);
    step += 1;
    if (step > steps) return answer('All done.');
    return reply([{ type: 'text', text: `Reading a.txt again (${step}).` }, toolUse(`t${step}`, 'read_file', { path: 'a.txt' })]);
  };
}

const FILE = `${'x'.repeat(59)}\n`.repeat(70);

describe('runs on the default model stay append-only (preserved thinking)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a 60-step run with several compactions of both kinds gets no refused request', async function () {
    this.timeout(120_000);
    h = await harness({ files: { 'a.txt': FILE }, script: wordsScript(60), fake: { promptCaching: true, defaultModelShape: true } });
    const settings = { ...DEFAULT_MODEL_SETTINGS, maxTurns: 200, maxContextTokens: 20_000 };
    const outcome = await h.runtime().start({ task: 'read a.txt 60 times', settings });
    assert.deepEqual(
      h.fake.refused.map((r) => `${r.index}: ${r.message}`),
      [],
    );
    assert.equal(outcome.status, 'completed', outcome.reason);
    assertEveryRequestValid(h.fake);
    const records = await h.records(outcome.runId);
    const compactions = records.filter((r): r is Extract<StoredRecord, { type: 'compaction' }> => r.type === 'compaction');
    assert.ok(compactions.length >= 3, `compactions: ${compactions.length}`);
    assert.deepEqual([...new Set(compactions.map((c) => c.kind))].sort(), ['cleared_tool_results', 'summary']);
  });

  it('a run stopped mid-way resumes (recovery note) and takes a new instruction with no refused request', async () => {
    h = await harness({ files: { 'a.txt': FILE }, script: wordsScript(12), fake: { promptCaching: true, defaultModelShape: true } });
    const settings = { ...DEFAULT_MODEL_SETTINGS, maxTurns: 200, maxContextTokens: 8_000 };
    const runtime = h.runtime();
    const controller = new AbortController();
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'after_model' && e.checkpoint.stepId === 6) controller.abort();
    });
    const paused = await runtime.start({ task: 'read a.txt', settings }, controller.signal);
    assert.equal(paused.status, 'paused');
    const done = await h.runtime().resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    const next = await h.runtime().continue(done.runId, 'Now say what you found.', new AbortController().signal, { moreTurns: 5 });
    assert.equal(next.status, 'completed', next.reason);
    assert.deepEqual(
      h.fake.refused.map((r) => `${r.index}: ${r.message}`),
      [],
    );
    assertEveryRequestValid(h.fake);
  });
});
