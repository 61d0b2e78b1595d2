import { strict as assert } from 'node:assert';
import { createAnthropicProvider } from '../../../src/core/model/anthropic';
import { TRUNCATED_INPUT_MESSAGE } from '../../../src/core/runtime/calls';
import { CONTINUE_AFTER_WINDOW } from '../../../src/core/runtime/loop';
import { describeFailure, type FailureAction } from '../../../src/words/failure-words';
import type { RunOutcome } from '../../../src/core/runtime/types';
import { ANSWER_SHAPES, answerShape, type AnswerName } from '../../support/fake-anthropic/answers';
import type { Step } from '../../support/fake-anthropic/script';
import { assertEveryRequestValid } from '../../support/valid-requests';
import { answer, harness, lastToolResults, reply, SETTINGS, startedCalls, toolUse, type Harness } from './harness';

// What the product does with each documented answer of the fake's table (answers.ts): no answer
// strands a run. After the answer, the double answers normally; the run completes by itself, or
// after the one thing a person does (a new instruction after a refusal, a resume after a pause).

interface Expected {
  /** How the run first ends. */
  readonly first: RunOutcome['status'];
  readonly reason?: RegExp;
  /** A model retry is said (a `retry` event) before the answer. */
  readonly retried?: true;
  /** The words the person reads (describeFailure's title) and the action offered first. */
  readonly words?: RegExp;
  readonly action?: FailureAction;
}

const EXPECTED: Record<AnswerName, Expected> = {
  empty_after_tool_results: { first: 'completed', reason: /^done$/ },
  empty_first_turn: { first: 'completed', reason: /^done$/ },
  refusal_with_text: { first: 'failed', reason: /^the model refused to continue: I started to answer, but I$/ },
  refusal_without_text: { first: 'failed', reason: /^the model refused to continue$/ },
  max_tokens_cut_tool_call: { first: 'completed', reason: /^done$/ },
  max_tokens_cut_text: { first: 'completed', reason: /^done$/ },
  pause_turn: { first: 'completed', reason: /^done$/ },
  stream_error_overloaded: { first: 'completed', reason: /^done$/, retried: true },
  stream_error_api: { first: 'completed', reason: /^done$/, retried: true },
  rate_limited_429: { first: 'completed', reason: /^done$/, retried: true },
  overloaded_529: { first: 'completed', reason: /^done$/, retried: true },
  server_error_500: { first: 'completed', reason: /^done$/, retried: true },
  context_window_exceeded_text: { first: 'completed', reason: /^done$/ },
  context_window_exceeded_tool_call: { first: 'completed', reason: /^done$/ },
  connection_reset_mid_stream: { first: 'completed', reason: /^done$/, retried: true },
  stream_stall: { first: 'completed', reason: /^done$/, retried: true },
  auth_401: { first: 'paused', words: /^The API key was refused$/, action: 'set_key' },
  permission_403: { first: 'paused', words: /^The API key was refused$/, action: 'set_key' },
  request_too_large_413: { first: 'paused', words: /too large/, action: 'retry' },
  tool_call_unknown_tool: { first: 'completed', reason: /^done$/ },
  tool_call_input_not_schema: { first: 'completed', reason: /^done$/ },
  tool_calls_same_id: { first: 'completed', reason: /^done$/ },
  thinking_omitted_words_between_tools: { first: 'completed', reason: /^done$/ },
  redacted_thinking: { first: 'completed', reason: /^Read it\.$/ },
  thinking_dropped_listed: { first: 'completed', reason: /^Going on without the dropped thinking\.$/ },
};

const readA = reply([toolUse('t1', 'read_file', { path: 'a.txt' })]);
const never = new AbortController().signal;

function shortTimeoutModel(h: Harness) {
  return createAnthropicProvider({ apiKey: 'sk-test-key', baseURL: h.fake.url, maxRetries: 3, streamRetryDelayMs: 5, timeoutMs: 300 });
}

/** Plays `plan`, then answers "done" to every request. */
function thenDone(plan: readonly Step[]) {
  return (_request: unknown, index: number): Step => plan[index] ?? answer('done');
}

describe('what the product does with each documented answer (real SDK, loopback server)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  for (const shape of ANSWER_SHAPES) {
    const expected = EXPECTED[shape.name];
    it(`${shape.name}: ${expected.first}, and the run goes on to completion`, async () => {
      const plan = [...(shape.afterToolResults ? [readA] : []), shape.step];
      h = await harness({ files: { 'a.txt': 'A', 'b.txt': 'B' }, script: thenDone(plan) });
      // A stall waits for the provider's own stream timeout: a short one here (the default is minutes).
      const runtime = shape.name === 'stream_stall' ? h.runtime({ model: shortTimeoutModel(h) }) : h.runtime();
      const started = Date.now();
      const first = await runtime.start({ task: 'read a.txt', settings: SETTINGS });
      if (shape.name === 'rate_limited_429') assert.ok(Date.now() - started >= 950, 'retry-after (1 s) is honoured');
      assert.equal(first.status, expected.first, first.reason);
      if (expected.reason) assert.match(first.reason ?? '', expected.reason);
      assert.equal(
        h.events.some((e) => e.type === 'model' && e.event.type === 'retry'),
        expected.retried === true,
      );
      if (expected.words) {
        const words = describeFailure(first.failure!);
        assert.match(words.title, expected.words, JSON.stringify(first.failure));
        assert.equal(words.actions[0], expected.action);
      }
      if (first.status === 'failed') {
        const next = await runtime.continue(first.runId, 'Try another way, please.', never, { moreTurns: 5 });
        assert.equal(next.status, 'completed', next.reason);
      }
      if (first.status === 'paused') {
        const next = await runtime.resume(first.runId);
        assert.equal(next.status, 'completed', next.reason);
      }
      const stored = (await h.store.readRun(first.runId)).messages;
      assert.ok(
        stored.every((m) => typeof m.content === 'string' || m.content.length > 0),
        'no empty message stored',
      );
      assertEveryRequestValid(h.fake);
    });
  }

  it('a tool call cut by max_tokens never runs: it gets an is_error result', async () => {
    h = await harness({ script: thenDone([answerShape('max_tokens_cut_tool_call')]) });
    const outcome = await h.runtime().start({ task: 'write big.txt', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(startedCalls(h.events), []);
    const [result] = lastToolResults(h.fake, 1);
    assert.deepEqual([result!.tool_use_id, result!.content, result!.is_error], ['toolu_cut', TRUNCATED_INPUT_MESSAGE, true]);
    assertEveryRequestValid(h.fake);
  });

  it('two tool calls with one id both run, each under an id of its own; no later request is refused', async () => {
    h = await harness({ files: { 'a.txt': 'A', 'b.txt': 'B' }, script: thenDone([answerShape('tool_calls_same_id')]) });
    const outcome = await h.runtime().start({ task: 'read both', settings: SETTINGS });
    assert.equal(outcome.status, 'completed', outcome.reason);
    const results = lastToolResults(h.fake, 1);
    assert.deepEqual(
      results.map((r) => [r.tool_use_id, r.content]),
      [
        ['toolu_twice', 'A'],
        ['toolu_twice_2', 'B'],
      ],
    );
    assert.deepEqual(h.fake.refused, []);
  });

  it('a cut answer that filled the context window is continued, never taken as the final words', async () => {
    h = await harness({ files: { 'a.txt': 'A' }, script: thenDone([readA, answerShape('context_window_exceeded_text')]) });
    const outcome = await h.runtime().start({ task: 'read a.txt', settings: SETTINGS });
    assert.equal(outcome.reason, 'done');
    const last = h.fake.requests[h.fake.requests.length - 1]!.body as { messages: { content: { text?: string }[] }[] };
    assert.deepEqual(
      last.messages[last.messages.length - 1]!.content.map((block) => block.text),
      [CONTINUE_AFTER_WINDOW],
    );
  });

  it('a stream that sends only pings for longer than the timeout is not a stall: the answer completes without a retry', async () => {
    const slow = { ...answer('thought long'), pingsAfterEvents: { events: 3, ms: 900, everyMs: 100 } };
    h = await harness({ script: thenDone([slow]) });
    const outcome = await h.runtime({ model: shortTimeoutModel(h) }).start({ task: 'think', settings: SETTINGS });
    assert.equal(outcome.reason, 'thought long');
    assert.deepEqual(
      h.events.filter((e) => e.type === 'model' && e.event.type === 'retry'),
      [],
    );
  });

  for (const name of ['overloaded_529', 'stream_error_api'] as const) {
    it(`${name} past every retry pauses the run (Retry); a resume completes it once the API answers`, async () => {
      const faults = Array.from({ length: 4 }, () => answerShape(name));
      h = await harness({ files: { 'a.txt': 'A' }, script: thenDone([readA, ...faults]) });
      const first = await h.runtime().start({ task: 'read a.txt', settings: SETTINGS });
      assert.equal(first.status, 'paused');
      assert.ok(first.failure && ['overloaded', 'server'].includes(first.failure.kind), JSON.stringify(first.failure));
      const resumed = await h.runtime().resume(first.runId);
      assert.equal(resumed.status, 'completed', resumed.reason);
      assertEveryRequestValid(h.fake);
    });
  }
});
