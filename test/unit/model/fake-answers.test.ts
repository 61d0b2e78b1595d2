import { strict as assert } from 'node:assert';
import Anthropic from '@anthropic-ai/sdk';
import { ANSWER_SHAPES } from '../../support/fake-anthropic/answers';
import { validateRequest } from '../../support/fake-anthropic/rules';
import { ResponseStep } from '../../support/fake-anthropic/script';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';

// Each documented answer of the table reaches the real SDK as the API sends it.

describe('the fake answers every documented way (raw SDK, streaming)', () => {
  let fake: FakeAnthropic | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('names an Anthropic page for every row, and each name once', () => {
    assert.equal(new Set(ANSWER_SHAPES.map((s) => s.name)).size, ANSWER_SHAPES.length);
    for (const shape of ANSWER_SHAPES) assert.match(shape.page.url, /^https:\/\/platform\.claude\.com\/docs\/en\//, shape.name);
  });

  for (const shape of ANSWER_SHAPES) {
    it(`${shape.name} (${shape.page.title})`, async () => {
      fake = await startFakeAnthropic([shape.step]);
      const client = new Anthropic({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
      const call = client.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] });
      if ('fault' in shape.step) {
        const step = shape.step;
        const said = step.fault === 'status' ? undefined : step.fault === 'stream_error' ? String(step.errorType) : undefined;
        // A reset has no words of its own: the SDK says the body read was terminated.
        await assert.rejects(call.finalMessage(), (error: Error & { status?: number }) =>
          step.fault === 'status' ? error.status === step.status : said === undefined || error.message.includes(said),
        );
        return;
      }
      if (shape.step.holdAfterEvents) {
        // A stall: the first events come, then nothing and no end; only the client's own timeout ends it.
        const events = shape.step.holdAfterEvents.events;
        let seen = 0;
        await new Promise<void>((resolve) => call.on('streamEvent', () => ++seen >= events - 1 && resolve()));
        call.abort();
        await assert.rejects(call.finalMessage(), (error: Error) => error.name === 'APIUserAbortError');
        return;
      }
      const expected = ResponseStep.parse(shape.step);
      const message = await call.finalMessage();
      assert.equal(message.stop_reason, expected.stop_reason);
      assert.deepEqual(
        message.content.map((b) => b.type),
        expected.content.map((b) => b.type),
      );
    });
  }

  it('the user turn that asks again after an empty answer is valid: the API merges consecutive user messages', () => {
    const results = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'A' }] };
    const body = (messages: unknown[]) => ({ model: 'claude-sonnet-4-6', max_tokens: 64, messages });
    const call = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'a.txt' } }] };
    const asked = [
      { role: 'user', content: 'read a.txt' },
      call,
      results,
      { role: 'user', content: [{ type: 'text', text: 'Please continue.' }] },
    ];
    assert.equal(validateRequest(body(asked)), null);
    // Storing the empty answer instead is what the API refuses on every later request.
    const stored = [...asked.slice(0, 3), { role: 'assistant', content: [] }, { role: 'user', content: 'go on' }];
    assert.equal(validateRequest(body(stored))?.rule, 'non_empty_content');
  });

  it('a 429 says how long to wait in retry-after, in seconds', async () => {
    const shape = ANSWER_SHAPES.find((s) => s.name === 'rate_limited_429')!;
    fake = await startFakeAnthropic([shape.step]);
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(response.status, 429);
    assert.equal(response.headers.get('retry-after'), '1');
    assert.equal(((await response.json()) as { error: { type: string } }).error.type, 'rate_limit_error');
  });
});
