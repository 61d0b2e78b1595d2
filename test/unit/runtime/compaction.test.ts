import { strict as assert } from 'node:assert';
import { SUMMARY_MARKER, SUMMARY_REQUEST } from '../../../src/core/runtime/compaction';
import type { StoredRecord } from '../../../src/core/store/records';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { requestTokens } from '../../support/fake-anthropic/cache';
import { rawHistoryTokens } from '../../support/history-tokens';
import type { RecordedRequest, Responder, Step } from '../../support/fake-anthropic/server';
import { answer, harness, reply, requestMessages, SETTINGS, toolUse, type Harness } from './harness';

type Message = { role: string; content: { type: string; id?: string; tool_use_id?: string; text?: string }[] };

function isSummaryRequest(request: RecordedRequest): boolean {
  const messages = (request.body as { messages: Message[] }).messages;
  const last = messages.at(-1)?.content;
  return Array.isArray(last) && last.at(-1)?.text === SUMMARY_REQUEST;
}

/** `steps` read_file calls then an answer; summary requests get a summary; `fault(n)` may replace the n-th step. */
function longScript(steps: number, fault: (n: number, summary: boolean) => Step | undefined = () => undefined): Responder {
  let step = 0;
  let summaries = 0;
  return (request) => {
    if (isSummaryRequest(request)) {
      summaries += 1;
      return fault(summaries, true) ?? answer(`Summary ${summaries}: read a.txt ${step} times; nothing else changed.`);
    }
    step += 1;
    const injected = fault(step, false);
    if (injected) return injected;
    if (step > steps) return answer('All done.');
    return reply([{ type: 'text', text: `Reading again (${step}).` }, toolUse(`t${step}`, 'read_file', { path: 'a.txt' })]);
  };
}

/** Every tool_use of a request's assistant messages has its tool_result in the next message, and no result is orphaned. */
function assertPaired(messages: Message[]): void {
  messages.forEach((message, i) => {
    const results = message.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
    const uses = i > 0 ? messages[i - 1]!.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : [];
    if (message.role === 'user') assert.deepEqual(results, uses, `message ${i}`);
  });
}

const FILE = `${'x'.repeat(59)}\n`.repeat(40);
/** The long run's budget leaves room for the tool definitions after clearing; its file makes the raw history 10x that. */
const BUDGET = 20_000;
const LONG_FILE = `${'x'.repeat(59)}\n`.repeat(70);

describe('context management', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a 200-step run whose raw history is 10x the budget completes with no request over the budget', async function () {
    this.timeout(240_000);
    h = await harness({ files: { 'a.txt': LONG_FILE }, script: longScript(200), fake: { promptCaching: true } });
    const settings = { ...SETTINGS, maxTurns: 400, maxContextTokens: BUDGET };
    const outcome = await h.runtime().start({ task: 'read a.txt 200 times', settings });
    assert.equal(outcome.status, 'completed', outcome.reason);
    const sizes = h.fake.requests.map((r) => requestTokens(r.body));
    assert.ok(Math.max(...sizes) <= BUDGET, `largest request ${Math.max(...sizes)} tokens`);
    const records = await h.records(outcome.runId);
    const raw = rawHistoryTokens(records);
    assert.ok(raw >= 10 * BUDGET, `raw history ${raw} tokens`);
    const compactions = records.filter((r): r is Extract<StoredRecord, { type: 'compaction' }> => r.type === 'compaction');
    assert.ok(compactions.some((c) => c.kind === 'cleared_tool_results'));
    assert.ok(compactions.some((c) => c.kind === 'summary'));
    assert.equal(records.filter((r) => r.type === 'checkpoint' && r.label === 'compacted').length, compactions.length);
    for (let n = 0; n < h.fake.requests.length; n++) assertPaired(requestMessages(h.fake, n) as Message[]);
    const state = await h.store.readRun(outcome.runId);
    assert.ok(state.messages.length < 100, `the active history is the compacted one (${state.messages.length})`);
    assert.ok(JSON.stringify(state.messages[0]).includes(SUMMARY_MARKER));
    // The timeline marks the steps that ended with a compaction.
    const view = buildRunView(state, new Map(), false);
    const marked = view.steps.filter((step) => step.compacted).map((step) => step.stepId);
    assert.deepEqual(marked, [...new Set(compactions.map((c) => c.stepId))]);
  });

  it('a run stopped right after a compaction resumes from the compacted history, byte for byte, plus the note', async () => {
    // The file store: the journal's fold (journal-log) must read a compaction as the memory store does.
    h = await harness({ store: 'file', files: { 'a.txt': FILE }, script: longScript(30), fake: { promptCaching: true } });
    const settings = { ...SETTINGS, maxTurns: 200, maxContextTokens: 6_000 };
    const runtime = h.runtime();
    const controller = new AbortController();
    let compacted = false;
    runtime.onEvent((e) => {
      if (e.type !== 'checkpoint') return;
      if (e.checkpoint.label === 'compacted') compacted = true;
      if (e.checkpoint.label === 'before_model' && compacted) controller.abort();
    });
    const paused = await runtime.start({ task: 'read', settings }, controller.signal);
    assert.equal(paused.status, 'paused');
    assert.ok(compacted, 'a compaction happened');
    const state = await h.store.readRun(paused.runId);
    const records = await h.records(paused.runId);
    const compaction = records.filter((r) => r.type === 'compaction').at(-1)!;
    assert.equal(state.messages.length, compaction.type === 'compaction' ? compaction.messagesAfter : -1);
    const sentBefore = h.fake.requests.length;
    const done = await h.runtime().resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    const first = requestMessages(h.fake, sentBefore) as Message[];
    const held = state.messages.map((m) => ({
      role: m.role,
      content: typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content,
    }));
    assert.equal(JSON.stringify(first.slice(0, held.length)), JSON.stringify(held));
    assert.equal(first.length, held.length + 1);
    assert.match(JSON.stringify(first.at(-1)), /\[recovery note\]/);
    assertPaired(first);
  });

  it('a run cut during the summary call keeps the history whole and compacts again on resume', async () => {
    let failSummary = true;
    const fault = (_n: number, summary: boolean): Step | undefined =>
      summary && failSummary ? { fault: 'status', status: 400, message: 'cut during the summary' } : undefined;
    h = await harness({ files: { 'a.txt': FILE }, script: longScript(40, fault), fake: { promptCaching: true } });
    const settings = { ...SETTINGS, maxTurns: 200, maxContextTokens: 6_000 };
    const paused = await h.runtime().start({ task: 'read', settings });
    assert.equal(paused.status, 'paused');
    assert.match(paused.reason ?? '', /cut during the summary/);
    const before = await h.records(paused.runId);
    assert.ok(!before.some((r) => r.type === 'compaction' && r.kind === 'summary'), 'no summary compaction was recorded');
    failSummary = false;
    const done = await h.runtime().resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    const after = await h.records(paused.runId);
    assert.ok(after.some((r) => r.type === 'compaction' && r.kind === 'summary'));
    const state = await h.store.readRun(paused.runId);
    assert.equal(state.budget.turns, h.fake.requests.length, 'every model call was counted, the failed summary too');
  });
});
