import { strict as assert } from 'node:assert';
import { createAnthropicProvider, rateLimitedWords, type AnthropicProviderOptions } from '../../../src/core/model/anthropic';
import { withCacheBreakpoints } from '../../../src/core/model/cache';
import { ModelError, type ModelEvent, type ModelRequest } from '../../../src/core/model/provider';
import { startFakeAnthropic, type FakeAnthropic, type ResponseStep, type Step } from '../../support/fake-anthropic/server';

const KEY = 'sk-ant-unit-test-secret-0123456789';

const request: ModelRequest = {
  model: 'claude-test-model',
  system: 'You are a test.',
  messages: [{ role: 'user', content: 'Fix the bug.' }],
  tools: [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
  maxTokens: 1000,
};

const parallelReads: ResponseStep = {
  content: [
    { type: 'text', text: 'I will read both files.' },
    { type: 'tool_use', id: 'toolu_01', name: 'read_file', input: { path: 'src/greet.js' } },
    { type: 'tool_use', id: 'toolu_02', name: 'read_file', input: { path: 'test.js', note: 'a "quoted" \\ value' } },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 321, output_tokens: 45 },
};

async function expectModelError(promise: Promise<unknown>, kind: ModelError['kind']): Promise<ModelError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ModelError, `expected ModelError, got ${String(error)}`);
    assert.equal(error.kind, kind, error.message);
    return error;
  }
  assert.fail(`expected ModelError ${kind}`);
}

describe('anthropic provider through the real SDK', () => {
  let fake: FakeAnthropic;
  afterEach(async () => fake.close());

  async function providerFor(script: Step[], extra: Partial<AnthropicProviderOptions> = {}) {
    fake = await startFakeAnthropic(script);
    return createAnthropicProvider({ apiKey: KEY, baseURL: fake.url, streamRetryDelayMs: 5, ...extra });
  }

  for (const streaming of [true, false]) {
    it(`returns text and parallel tool_use blocks (${streaming ? 'streaming' : 'plain'})`, async () => {
      const provider = await providerFor([parallelReads], { streaming });
      const events: ModelEvent[] = [];
      const response = await provider.complete(request, (e) => events.push(e));
      assert.deepEqual(response.content, parallelReads.content);
      assert.equal(response.stopReason, 'tool_use');
      assert.equal(response.model, 'claude-test-model');
      assert.deepEqual(response.usage, { inputTokens: 321, outputTokens: 45, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 });
      const sent = fake.requests[0];
      assert.equal(sent?.apiKeySeen, KEY);
      const body = sent?.body as Record<string, unknown>;
      assert.equal(body['stream'], streaming);
      // Prompt-cache breakpoints on the system prompt, the last tool and the latest message.
      assert.deepEqual(body['system'], [{ type: 'text', text: 'You are a test.', cache_control: { type: 'ephemeral' } }]);
      assert.deepEqual(body['messages'], withCacheBreakpoints(request.tools, undefined, request.messages).messages);
      assert.deepEqual(body['tools'], withCacheBreakpoints(request.tools, undefined, request.messages).tools);
      assert.equal((JSON.stringify(body).match(/cache_control/g) ?? []).length, 3);
      assert.equal(body['max_tokens'], 1000);
      if (streaming) {
        assert.equal(
          events
            .filter((e) => e.type === 'text')
            .map((e) => (e.type === 'text' ? e.text : ''))
            .join(''),
          'I will read both files.',
        );
        assert.deepEqual(
          events.filter((e) => e.type === 'tool_use_start'),
          [
            { type: 'tool_use_start', name: 'read_file', id: 'toolu_01' },
            { type: 'tool_use_start', name: 'read_file', id: 'toolu_02' },
          ],
        );
      }
    });
  }

  it('retries 429 and 500 through the SDK, then succeeds, reporting each retry', async () => {
    const provider = await providerFor([
      { fault: 'status', status: 429, retryAfterMs: 5 },
      { fault: 'status', status: 500, retryAfterSeconds: 0.005 },
      parallelReads,
    ]);
    const events: ModelEvent[] = [];
    const response = await provider.complete(request, (e) => events.push(e));
    assert.equal(response.stopReason, 'tool_use');
    assert.equal(fake.requests.length, 3);
    assert.deepEqual(
      events.filter((e) => e.type === 'retry'),
      [
        { type: 'retry', attempt: 2, error: 'rate limited, retrying in 5 ms', waitMs: 5 },
        { type: 'retry', attempt: 3, error: 'HTTP 500' },
      ],
    );
  });

  it('a 429 says its retry-after wait once, when the wait starts (before the next request), and the SDK waits it', async () => {
    const provider = await providerFor([{ fault: 'status', status: 429, retryAfterSeconds: 1 }, parallelReads]);
    const said: { event: ModelEvent; requestsThen: number; at: number }[] = [];
    const started = Date.now();
    await provider.complete(request, (event) => said.push({ event, requestsThen: fake.requests.length, at: Date.now() }));
    const retries = said.filter((s) => s.event.type === 'retry');
    assert.deepEqual(
      retries.map((s) => s.event),
      [{ type: 'retry', attempt: 2, error: 'rate limited, retrying in 1 s', waitMs: 1000 }],
    );
    assert.equal(retries[0]!.requestsThen, 1, 'said before the request it announces');
    assert.ok(retries[0]!.at - started < 900, 'said when the wait starts');
    assert.ok(Date.now() - started >= 950, 'retry-after honoured');
  });

  it('rate-limit words: seconds from a second on, ms below', () => {
    assert.equal(rateLimitedWords(20_000), 'rate limited, retrying in 20 s');
    assert.equal(rateLimitedWords(1_500), 'rate limited, retrying in 1.5 s');
    assert.equal(rateLimitedWords(250), 'rate limited, retrying in 250 ms');
  });

  it('retries 529 overloaded, and maps it when retries run out', async () => {
    const recovered = await providerFor([{ fault: 'status', status: 529 }, parallelReads]);
    assert.equal((await recovered.complete(request)).stopReason, 'tool_use');
    assert.equal(fake.requests.length, 2);
    await fake.close();

    const exhausted = await providerFor(
      [
        { fault: 'status', status: 529 },
        { fault: 'status', status: 529 },
      ],
      { maxRetries: 1 },
    );
    const error = await expectModelError(exhausted.complete(request), 'overloaded');
    assert.equal(error.status, 529);
    assert.equal(fake.requests.length, 2);
  });

  it('retries a connection reset before the response', async () => {
    const provider = await providerFor([{ fault: 'reset' }, parallelReads]);
    const events: ModelEvent[] = [];
    const response = await provider.complete(request, (e) => events.push(e));
    assert.equal(response.content.length, 3);
    assert.equal(fake.requests.length, 2);
    assert.equal(events.filter((e) => e.type === 'retry').length, 1);
  });

  it('retries a stream cut after its headers', async () => {
    const provider = await providerFor([{ fault: 'reset', afterEvents: 3 }, parallelReads]);
    const events: ModelEvent[] = [];
    const response = await provider.complete(request, (e) => events.push(e));
    assert.deepEqual(response.content, parallelReads.content);
    assert.equal(fake.requests.length, 2);
    const retries = events.filter((e) => e.type === 'retry');
    assert.equal(retries.length, 1);
    assert.match(retries[0]?.type === 'retry' ? retries[0].error : '', /network/);
  });

  it('retries an overloaded error sent inside the stream, and maps it when retries run out', async () => {
    const recovered = await providerFor([{ fault: 'stream_error', errorType: 'overloaded_error' }, parallelReads]);
    assert.deepEqual((await recovered.complete(request)).content, parallelReads.content);
    assert.equal(fake.requests.length, 2);
    await fake.close();

    const exhausted = await providerFor([{ fault: 'stream_error' }, { fault: 'stream_error', afterEvents: 4 }], { maxRetries: 1 });
    await expectModelError(exhausted.complete(request), 'overloaded');
    assert.equal(fake.requests.length, 2);
  });

  it('gives network after the retries run out', async () => {
    const provider = await providerFor(
      [
        { fault: 'reset', afterEvents: 2 },
        { fault: 'reset', afterEvents: 2 },
      ],
      { maxRetries: 1 },
    );
    await expectModelError(provider.complete(request), 'network');
    assert.equal(fake.requests.length, 2);
  });

  it('aborts a stalled request quickly through the signal', async () => {
    const provider = await providerFor([{ fault: 'stall', ms: 60_000 }]);
    const controller = new AbortController();
    const started = Date.now();
    const failed = expectModelError(provider.complete({ ...request, signal: controller.signal }), 'aborted');
    // Aborted once the server holds the request (the stall), not after a guessed delay.
    while (fake.requests.length === 0 && Date.now() - started < 2000) await new Promise((r) => setImmediate(r));
    controller.abort();
    await failed;
    assert.ok(Date.now() - started < 10_000, `abort took ${Date.now() - started} ms`);
    assert.equal(fake.requests.length, 1);
  });

  it('aborts mid-stream through the signal', async () => {
    const provider = await providerFor([{ ...parallelReads, eventDelayMs: 50 }]);
    const controller = new AbortController();
    const pending = provider.complete({ ...request, signal: controller.signal }, (e) => {
      if (e.type === 'text') controller.abort();
    });
    await expectModelError(pending, 'aborted');
  });

  it('returns a tool_use truncated at max_tokens without crashing', async () => {
    const provider = await providerFor([
      {
        content: [
          { type: 'text', text: 'Writing the file.' },
          {
            type: 'tool_use',
            id: 'toolu_cut',
            name: 'write_file',
            input: {},
            rawInputJson: '{"path": "src/greet.js", "content": "function gre',
          },
        ],
        stop_reason: 'max_tokens',
      },
    ]);
    const response = await provider.complete(request);
    assert.equal(response.stopReason, 'max_tokens');
    const last = response.content.at(-1);
    assert.equal(last?.type, 'tool_use');
    assert.equal((last as { id: string }).id, 'toolu_cut');
    assert.equal(typeof (last as { input: unknown }).input, 'object');
  });

  it('maps 401 to auth and never puts the key in the message', async () => {
    const provider = await providerFor([{ fault: 'status', status: 401, message: `invalid x-api-key ${KEY}` }]);
    const error = await expectModelError(provider.complete(request), 'auth');
    assert.equal(error.status, 401);
    assert.equal(fake.requests.length, 1, 'auth errors are not retried');
    assert.ok(!error.message.includes(KEY), error.message);
    assert.ok(!String(error.stack).includes(KEY));
    assert.match(error.message, /authentication_error/);
  });

  it('maps 400 to bad_request without retrying', async () => {
    const provider = await providerFor([{ fault: 'status', status: 400, message: 'messages: field required' }]);
    const error = await expectModelError(provider.complete(request), 'bad_request');
    assert.match(error.message, /field required/);
    assert.equal(fake.requests.length, 1);
  });

  it('honours ANTHROPIC_BASE_URL when no baseURL is given', async () => {
    fake = await startFakeAnthropic([parallelReads]);
    const saved = process.env['ANTHROPIC_BASE_URL'];
    process.env['ANTHROPIC_BASE_URL'] = fake.url;
    try {
      const response = await createAnthropicProvider({ apiKey: KEY }).complete(request);
      assert.equal(response.stopReason, 'tool_use');
      assert.equal(fake.requests.length, 1);
    } finally {
      if (saved === undefined) delete process.env['ANTHROPIC_BASE_URL'];
      else process.env['ANTHROPIC_BASE_URL'] = saved;
    }
  });

  it('refuses an empty API key without a request', async () => {
    const provider = await providerFor([parallelReads], { apiKey: ' ' });
    await expectModelError(provider.complete(request), 'auth');
    assert.equal(fake.requests.length, 0);
  });

  it('uses the configured model when the request names none', async () => {
    const provider = await providerFor([parallelReads], { model: 'claude-configured' });
    await provider.complete({ ...request, model: '' });
    assert.equal((fake.requests[0]?.body as { model: string }).model, 'claude-configured');
  });
});
