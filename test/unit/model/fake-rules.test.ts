import { strict as assert } from 'node:assert';
import Anthropic from '@anthropic-ai/sdk';
import { signThinking } from '../../support/fake-anthropic/cache';
import { validateRequest, type RuleName } from '../../support/fake-anthropic/rules';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';

type Body = Record<string, unknown>;
const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });
const text = (t: string) => ({ type: 'text', text: t });
const use = (id: string) => ({ type: 'tool_use', id, name: 'read_file', input: { path: 'a' } });
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });
const thought = (t: string) => ({ type: 'thinking', thinking: t, signature: signThinking(t) });
const tool = (name: string, input_schema: unknown = { type: 'object', properties: {} }) => ({ name, description: 'd', input_schema });
const body = (messages: unknown[], extra: Body = {}): Body => ({ model: 'claude-haiku-4-5', max_tokens: 4096, messages, ...extra });
const cached = (block: Body) => ({ ...block, cache_control: { type: 'ephemeral' } });
const thinkingOn = { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } };

interface Case {
  readonly rule: RuleName;
  readonly valid: Body;
  readonly invalid: Body;
  readonly message: RegExp;
  readonly contextWindow?: number;
}

// One request the API accepts and one it refuses, per rule; the refusal's words are the API's.
const CASES: readonly Case[] = [
  {
    rule: 'tool_result_after_tool_use',
    valid: body([user('go'), assistant([use('t1')]), user([result('t1')])]),
    invalid: body([user('go'), assistant([use('t1'), use('t2')]), user([result('t1')])]),
    message:
      /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: t2\. Each `tool_use` block must have a corresponding `tool_result` block in the next message\.$/,
  },
  {
    rule: 'tool_result_after_tool_use',
    valid: body([user('go'), assistant([text('hi')]), user('again')]),
    invalid: body([user('go'), assistant([use('t1')]), user('a new instruction')]),
    message: /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1\./,
  },
  {
    rule: 'tool_result_answers_tool_use',
    valid: body([user('go'), assistant([use('t1')]), user([result('t1'), text('and more')])]),
    invalid: body([user('go'), assistant([text('no tools')]), user([result('t9')])]),
    message:
      /^messages\.2\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: t9\. Each `tool_result` block must have a corresponding `tool_use` block in the previous message\.$/,
  },
  {
    rule: 'tool_result_first',
    valid: body([user('go'), assistant([use('t1')]), user([result('t1'), text('note')])]),
    invalid: body([user('go'), assistant([use('t1')]), user([text('note'), result('t1')])]),
    message: /^messages\.2: Did not find 1 `tool_result` block\(s\) at the beginning of this message\./,
  },
  {
    rule: 'non_empty_content',
    valid: body([user('go'), assistant([])]),
    invalid: body([user('go'), assistant([]), user('again')]),
    message: /^messages\.1: all messages must have non-empty content except for the optional final assistant message$/,
  },
  {
    rule: 'non_empty_text',
    valid: body([user('go'), assistant([text('\n\n'), use('t1')]), user([result('t1')])]),
    invalid: body([user('go'), assistant([text(''), use('t1')]), user([result('t1')])]),
    message: /^messages: text content blocks must be non-empty$/,
  },
  {
    rule: 'non_empty_text',
    valid: body([user([text('hi'), text(' ')])]),
    invalid: body([user('  \n')]),
    message: /^messages: text content blocks must contain non-whitespace text$/,
  },
  {
    rule: 'non_empty_text',
    valid: body([user('go')], { system: '' }),
    invalid: body([user('go')], { system: [text('')] }),
    message: /^system: text content blocks must be non-empty$/,
  },
  {
    rule: 'tool_name',
    valid: body([user('go')], { tools: [tool('read_file'), tool('mcp__git-log')] }),
    invalid: body([user('go')], { tools: [tool('read_file'), tool('git.log')] }),
    message: /^tools\.1\.custom\.name: String should match pattern '\^\[a-zA-Z0-9_-\]\{1,64\}\$'$/,
  },
  {
    rule: 'tool_name',
    valid: body([user('go')], { tools: [tool('a'), tool('b')] }),
    invalid: body([user('go')], { tools: [tool('a'), tool('a')] }),
    message: /^tools: Tool names must be unique\.$/,
  },
  {
    rule: 'tool_schema',
    valid: body([user('go')], { tools: [tool('a', { type: 'object' })] }),
    invalid: body([user('go')], { tools: [tool('a', { type: 'string' })] }),
    message: /^tools\.0\.custom\.input_schema\.type: Input should be 'object'$/,
  },
  {
    rule: 'tool_use_id_unique',
    valid: body([user('go'), assistant([use('t1')]), user([result('t1')]), assistant([use('t2')]), user([result('t2')])]),
    invalid: body([user('go'), assistant([use('t1')]), user([result('t1')]), assistant([use('t1')]), user([result('t1')])]),
    message: /^messages\.3\.content\.0: `tool_use` ids must be unique$/,
  },
  {
    rule: 'cache_breakpoints',
    valid: body([user([cached(text('a'))]), assistant([cached(text('b'))])], { tools: [cached(tool('x'))], system: [cached(text('s'))] }),
    invalid: body([user([cached(text('a'))]), assistant([cached(text('b'))]), user([cached(text('c'))])], {
      tools: [cached(tool('x'))],
      system: [cached(text('s'))],
    }),
    message: /^A maximum of 4 blocks with cache_control may be provided\. Found 5\.$/,
  },
  {
    rule: 'thinking_signature',
    valid: body([user('go'), assistant([thought('plan'), text('done')]), user('more')]),
    invalid: body([user('go'), assistant([{ ...thought('plan'), thinking: 'edited plan' }, text('done')]), user('more')]),
    message: /^messages\.1\.content\.0: Invalid `signature` in `thinking` block$/,
  },
  {
    rule: 'thinking_kept',
    valid: body([user('go'), assistant([thought('plan'), use('t1')]), user([result('t1')])], thinkingOn),
    invalid: body([user('go'), assistant([use('t1')]), user([result('t1')])], thinkingOn),
    message:
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`\. When `thinking` is enabled, a final `assistant` message must start with a thinking block/,
  },
  {
    rule: 'thinking_budget',
    valid: body([user('go')], { max_tokens: 1025, thinking: { type: 'enabled', budget_tokens: 1024 } }),
    invalid: body([user('go')], { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1023 } }),
    message: /^thinking\.enabled\.budget_tokens: Input should be greater than or equal to 1024$/,
  },
  {
    rule: 'thinking_budget',
    valid: body([user('go')], { max_tokens: 8192, thinking: { type: 'enabled', budget_tokens: 8191 } }),
    invalid: body([user('go')], { max_tokens: 8192, thinking: { type: 'enabled', budget_tokens: 8192 } }),
    message: /^`max_tokens` must be greater than `thinking\.budget_tokens`\./,
  },
  {
    rule: 'context_window',
    contextWindow: 1000,
    valid: body([user('x'.repeat(3000))]),
    invalid: body([user('x'.repeat(5000))]),
    message: /^prompt is too long: 12\d\d tokens > 1000 maximum$/,
  },
];

describe('fake Messages API rules (one accepted and one refused request per rule)', () => {
  for (const c of CASES) {
    const words = c.message.source
      .replace(/\\/g, '')
      .replace(/^\^|\$$/g, '')
      .slice(0, 60);
    it(`${c.rule}: "${words}"`, () => {
      const options = c.contextWindow === undefined ? {} : { contextWindow: c.contextWindow };
      assert.equal(validateRequest(c.valid, options), null);
      const refused = validateRequest(c.invalid, options);
      assert.ok(refused, 'the invalid request must be refused');
      assert.equal(refused.status, 400);
      assert.equal(refused.type, 'invalid_request_error');
      assert.equal(refused.rule, c.rule);
      assert.match(refused.message, c.message);
    });
  }

  it('knows model windows from the model table: 1M for a 1M model, 200K for an unknown one', () => {
    const big = 'x'.repeat(1_200_000); // about 300K tokens
    assert.equal(validateRequest({ ...body([user(big)]), model: 'claude-sonnet-5-5' }), null);
    assert.match(validateRequest({ ...body([user(big)]), model: 'claude-fake' })?.message ?? '', /> 200000 maximum$/);
  });
});

describe('fake server under the rules', () => {
  let fake: FakeAnthropic;
  afterEach(async () => fake.close());
  const reply = { content: [{ type: 'text' as const, text: 'never sent' }] };
  const broken = [user('go'), assistant([use('t1')]), user('new instruction')] as Anthropic.MessageParam[];

  it('answers a breach with 400 and the API error shape, records it, and keeps the scripted reply', async () => {
    fake = await startFakeAnthropic([reply]);
    const response = await fetch(`${fake.url}/v1/messages`, { method: 'POST', body: JSON.stringify(body(broken)) });
    assert.equal(response.status, 400);
    const error = (await response.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(error.type, 'error');
    assert.equal(error.error.type, 'invalid_request_error');
    assert.match(error.error.message, /tool_use` ids were found without `tool_result` blocks immediately after: t1/);
    assert.deepEqual(
      fake.refused.map((r) => [r.rule, r.index]),
      [['tool_result_after_tool_use', 0]],
    );
    const client = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 0 });
    const ok = await client.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 10,
      messages: [user('hi') as Anthropic.MessageParam],
    });
    assert.deepEqual(ok.content, reply.content, 'the refused request did not use up the script');
  });

  it('the SDK sees a BadRequestError it does not retry', async () => {
    fake = await startFakeAnthropic([reply, reply]);
    const client = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 3 });
    await assert.rejects(client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: broken }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError);
      return true;
    });
    assert.equal(fake.requests.length, 1);
  });

  it('a lenient fake answers what the API would refuse (for tests of the reply itself)', async () => {
    fake = await startFakeAnthropic([reply], { lenient: true });
    const client = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 0 });
    const ok = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: broken });
    assert.deepEqual(ok.content, reply.content);
    assert.equal(fake.refused.length, 0);
  });
});
