import { strict as assert } from 'node:assert';
import { createAnthropicProvider } from '../../../src/core/model/anthropic';
import { ModelError } from '../../../src/core/model/provider';
import { thinkingParam } from '../../../src/core/runtime/request';
import type { RunSettings } from '../../../src/core/store/records';
import { signThinking } from '../../support/fake-anthropic/cache';
import { startFakeAnthropic, type Responder } from '../../support/fake-anthropic/server';
import { answer, harness, reply, SETTINGS, toolUse, type Harness } from './harness';

/** Each step thinks, says something and reads a file; the n-th answer thinks too. */
function thinkingScript(steps: number): Responder {
  let step = 0;
  return (request) => {
    const messages = (request.body as { messages: { content: unknown }[] }).messages;
    const summary = JSON.stringify(messages.at(-1)).includes('Write a summary of the work so far');
    if (summary) return answer('Summary: read the file many times.');
    step += 1;
    const thinking = { type: 'thinking' as const, thinking: `Step ${step}: I should read a.txt again; "quotes" \\ and ünïcode.` };
    if (step > steps) return reply([thinking, { type: 'text', text: 'Done.' }], 'end_turn');
    return reply([thinking, { type: 'text', text: `Reading (${step}).` }, toolUse(`t${step}`, 'read_file', { path: 'a.txt' })]);
  };
}

describe('extended thinking', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('asks for thinking and sends each thinking block back byte for byte across save points, resume and compaction', async () => {
    h = await harness({ files: { 'a.txt': `${'y'.repeat(70)}\n`.repeat(30) }, script: thinkingScript(30), fake: { promptCaching: true } });
    const settings = {
      ...SETTINGS,
      model: 'claude-sonnet-4-6',
      maxTurns: 200,
      maxContextTokens: 9_000,
      thinking: { type: 'enabled' as const, budgetTokens: 2048 },
    };
    const runtime = h.runtime();
    const controller = new AbortController();
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'after_model' && e.checkpoint.stepId === 12) controller.abort();
    });
    const paused = await runtime.start({ task: 'read', settings }, controller.signal);
    assert.equal(paused.status, 'paused');
    const done = await h.runtime().resume(paused.runId);
    // Every request passed the fake's signature check (a changed block is answered 400).
    assert.equal(done.status, 'completed', done.reason);
    const first = h.fake.requests[0]!.body as { thinking: unknown; max_tokens: number };
    assert.deepEqual(first.thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.equal(first.max_tokens, 1024 + 2048);
    const records = await h.records(paused.runId);
    assert.ok(
      records.some((r) => r.type === 'compaction'),
      'the run compacted',
    );
    const sentBack = h.fake.requests.flatMap((r) =>
      (r.body as { messages: { role: string; content: unknown }[] }).messages.flatMap((m) =>
        m.role === 'assistant' && Array.isArray(m.content) ? (m.content as { type: string }[]).filter((b) => b.type === 'thinking') : [],
      ),
    );
    assert.ok(sentBack.length > 30);
    for (const block of sentBack as unknown as { thinking: string; signature: string }[])
      assert.equal(block.signature, signThinking(block.thinking));
  });

  it('a model that thinks adaptively gets adaptive thinking; without the setting nothing is asked', async () => {
    h = await harness({ script: [answer('a'), answer('b')] });
    await h
      .runtime()
      .start({ task: 't', settings: { ...SETTINGS, model: 'claude-sonnet-5-5', thinking: { type: 'enabled', budgetTokens: 2048 } } });
    const none = await h.runtime().start({ task: 't', settings: SETTINGS });
    const [adaptive, sentNone] = h.fake.requests.map((r) => r.body as { thinking?: unknown; max_tokens: number });
    assert.deepEqual(adaptive!.thinking, { type: 'adaptive', display: 'summarized' });
    assert.equal(adaptive!.max_tokens, 1024);
    assert.equal(sentNone!.thinking, undefined);
    assert.deepEqual((await h.store.readRun(none.runId)).run.thinkingSent, { type: 'none' });
  });

  // What each value of the setting sends, per kind of model ("What's new in Claude Sonnet 5.5":
  // the default model refuses `disabled`, its lowest setting is `between_tools`).
  const MEANINGS: [model: string, setting: RunSettings['thinking'], sent: unknown][] = [
    ['claude-sonnet-5-5', undefined, { type: 'between_tools' }],
    ['claude-sonnet-5-5', { type: 'adaptive' }, { type: 'adaptive', display: 'summarized' }],
    ['claude-sonnet-5-5', { type: 'enabled', budgetTokens: 4096 }, { type: 'adaptive', display: 'summarized' }],
    ['claude-fable-5-2', undefined, { type: 'adaptive', display: 'summarized' }],
    ['claude-sonnet-4-6', undefined, undefined],
    ['claude-sonnet-4-6', { type: 'adaptive' }, { type: 'adaptive' }],
    ['claude-sonnet-4-6', { type: 'enabled', budgetTokens: 4096 }, { type: 'enabled', budget_tokens: 4096 }],
  ];
  for (const [model, setting, sent] of MEANINGS) {
    it(`thinking ${JSON.stringify(setting ?? 'off')} on ${model} sends ${JSON.stringify(sent ?? 'no parameter')}, recorded in the run`, async () => {
      h = await harness({ script: [answer('a')] });
      const settings: RunSettings = { ...SETTINGS, model, ...(setting !== undefined ? { thinking: setting } : {}) };
      const outcome = await h.runtime().start({ task: 't', settings });
      assert.equal(outcome.status, 'completed', outcome.reason);
      assert.deepEqual((h.fake.requests[0]!.body as { thinking?: unknown }).thinking, sent);
      assert.deepEqual((await h.store.readRun(outcome.runId)).run.thinkingSent, sent ?? { type: 'none' });
      assert.equal(thinkingParam(settings) === undefined, sent === undefined);
    });
  }

  it('the test double refuses a thinking block whose text or signature changed', async () => {
    const fake = await startFakeAnthropic([answer('never')]);
    try {
      const provider = createAnthropicProvider({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
      const changed = { type: 'thinking', thinking: 'edited', signature: signThinking('original') };
      const request = {
        model: 'claude-sonnet-4-6',
        messages: [
          { role: 'user' as const, content: 'q' },
          { role: 'assistant' as const, content: [changed, { type: 'text', text: 'a' }] },
          { role: 'user' as const, content: 'q2' },
        ],
        tools: [],
        maxTokens: 100,
      };
      await assert.rejects(
        provider.complete(request),
        (e: unknown) => e instanceof ModelError && /Invalid `signature` in `thinking` block/.test(e.message),
      );
    } finally {
      await fake.close();
    }
  });
});
