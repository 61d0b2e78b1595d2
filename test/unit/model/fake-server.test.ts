import { strict as assert } from 'node:assert';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';

const KEY = 'sk-ant-test-fake-server-key';

describe('fake Anthropic server through the raw SDK', () => {
  let fake: FakeAnthropic;
  afterEach(async () => fake.close());

  const toolStep = {
    content: [
      { type: 'text' as const, text: 'Reading both files now.' },
      { type: 'tool_use' as const, id: 'toolu_a', name: 'read_file', input: { path: 'src/a.js' } },
      { type: 'tool_use' as const, id: 'toolu_b', name: 'read_file', input: { path: 'src/b.js' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 50, output_tokens: 30 },
  };

  it('streams text and parallel tool_use blocks the SDK accumulates', async () => {
    fake = await startFakeAnthropic([toolStep]);
    const client = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
    const message = await client.messages
      .stream({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    assert.deepEqual(JSON.parse(JSON.stringify(message.content)), toolStep.content);
    assert.equal(message.stop_reason, 'tool_use');
    assert.equal(message.usage.output_tokens, 30);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]?.apiKeySeen, KEY);
    assert.equal((fake.requests[0]?.body as { stream?: boolean }).stream, true);
  });

  it('answers plain JSON and records the parsed body', async () => {
    fake = await startFakeAnthropic([toolStep]);
    const client = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
    const message = await client.messages.create({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(message.content, toolStep.content);
    assert.deepEqual((fake.requests[0]?.body as { messages: unknown }).messages, [{ role: 'user', content: 'hi' }]);
    assert.equal(fake.requests[0]?.path, '/v1/messages');
  });

  it('plays faults then a response, and answers a responder function', async () => {
    fake = await startFakeAnthropic([{ fault: 'status', status: 429, retryAfterMs: 1 }]);
    fake.push((request, index) => ({ content: [{ type: 'text', text: `answer ${index} ${request.method}` }] }));
    const client = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 2 });
    const message = await client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    assert.deepEqual(message.content, [{ type: 'text', text: 'answer 1 POST' }]);
    assert.equal(fake.requests.length, 2);
  });

  it('fails loudly when the script is exhausted', async () => {
    fake = await startFakeAnthropic([]);
    const client = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
    await assert.rejects(
      client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
      /script exhausted/,
    );
  });
});
