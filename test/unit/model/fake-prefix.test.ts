import { strict as assert } from 'node:assert';
import Anthropic from '@anthropic-ai/sdk';
import { preservedThinking, ThinkingLedger } from '../../support/fake-anthropic/preserved-thinking';
import { validateRequest } from '../../support/fake-anthropic/rules';
import { plainBlock, ResponseStep } from '../../support/fake-anthropic/script';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';

// The fake's rules of preserved thinking (preserved-thinking.ts): what it produced on a model that
// runs the prefix check is remembered by signature, and a request that changed a block's prefix,
// or left out or moved a block between others, gets the API's 400.

type Json = Record<string, unknown>;
const MODEL = 'claude-sonnet-5-5';
const tools = [{ name: 'read_file', description: 'Read a file.', input_schema: { type: 'object', properties: {} } }];
const use = (id: string) => ({ type: 'tool_use' as const, id, name: 'read_file', input: { path: 'a' } });
const result = (id: string, content = 'ok') => ({ type: 'tool_result', tool_use_id: id, content });
const request = (messages: unknown[], extra: Json = {}): Json => ({
  model: MODEL,
  max_tokens: 4096,
  system: 'Be brief.',
  tools,
  messages,
  ...extra,
});

/** A conversation of `turns` tool calls, each answer produced (and remembered) by the ledger in the default shape. */
function conversation(ledger: ThinkingLedger, turns: number, extra: Json = {}): unknown[] {
  const messages: unknown[] = [{ role: 'user', content: 'read a, several times' }];
  for (let n = 1; n <= turns; n++) {
    const step: ResponseStep = {
      content: [
        { type: 'text', text: `Reading (${n}).` },
        { ...use(`t${n}`), input: { path: 'a' } },
      ],
    };
    const shaped = preservedThinking(step, request(messages, extra), ledger, true, n);
    messages.push({ role: 'assistant', content: ResponseStep.parse(shaped).content.map(plainBlock) });
    messages.push({ role: 'user', content: [result(`t${n}`)] });
  }
  return messages;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
type Msg = { role: string; content: Json[] };

describe('the fake runs the prefix check on thinking blocks (preserved thinking)', () => {
  it('accepts a conversation sent back byte for byte, cache marks moved included', () => {
    const ledger = new ThinkingLedger();
    const messages = conversation(ledger, 4) as Msg[];
    assert.equal(validateRequest(request(messages), { ledger }), null);
    const marked = clone(messages);
    marked[2]!.content[0]!['cache_control'] = { type: 'ephemeral' };
    assert.equal(validateRequest(request(marked), { ledger }), null);
  });

  it('answers in the default shape: signed thinking with empty text, the words inside a thinking block', () => {
    const ledger = new ThinkingLedger();
    const [, first] = conversation(ledger, 1) as Msg[];
    assert.deepEqual(
      first!.content.map((b) => [b['type'], b['thinking']]),
      [
        ['thinking', ''],
        ['thinking', ''],
        ['tool_use', undefined],
      ],
    );
    assert.ok(first!.content.slice(0, 2).every((b) => typeof b['signature'] === 'string' && b['signature'] !== ''));
    const shown = conversation(new ThinkingLedger(), 1, { thinking: { type: 'adaptive', display: 'summarized' } }) as Msg[];
    assert.equal(shown[1]!.content[1]!['thinking'], 'Reading (1).');
    const between = conversation(new ThinkingLedger(), 1, { thinking: { type: 'between_tools' } }) as Msg[];
    assert.deepEqual(
      between[1]!.content.map((b) => b['thinking'] ?? b['type']),
      ['Reading (1).', 'tool_use'],
    );
  });

  const refusals: [string, (messages: Msg[], body: Json) => void][] = [
    ['the system prompt changed', (_m, body) => void (body['system'] = 'Be brief. Today is Friday.')],
    ['a tool description changed', (_m, body) => void (body['tools'] = [{ ...tools[0], description: 'Read a file (v2).' }])],
    ['an earlier tool result was rewritten (compaction clearing it)', (m) => void (m[2]!.content[0]!['content'] = '[cleared]')],
    ['a note was added to an earlier user message', (m) => void m[2]!.content.push({ type: 'text', text: 'note' })],
    ['a thinking block between others was left out', (m) => void m[3]!.content.splice(1, 1)],
    ['a thinking block was moved', (m) => void m[3]!.content.reverse()],
    ['an empty thinking text was filled in', (m) => void (m[1]!.content[0]!['thinking'] = 'x')],
  ];
  for (const [what, change] of refusals) {
    it(`refuses with the API's 400 when ${what}`, () => {
      const ledger = new ThinkingLedger();
      const messages = clone(conversation(ledger, 3)) as Msg[];
      const body = request(messages);
      change(messages, body);
      const breach = validateRequest(body, { ledger });
      assert.ok(breach, 'refused');
      assert.ok(['thinking_prefix', 'thinking_signature'].includes(breach.rule), breach.rule);
      if (breach.rule === 'thinking_prefix')
        assert.match(
          breach.message,
          /^messages\.\d+\.content\.\d+: Invalid `signature` in `(redacted_)?thinking` block\. The block is bound to a different conversation\./,
        );
    });
  }

  it('accepts the thinking of the latest turns left out (none after them), and thinking dropped from every kept turn', () => {
    const ledger = new ThinkingLedger();
    const messages = clone(conversation(ledger, 3)) as Msg[];
    messages[5]!.content = messages[5]!.content.filter((b) => b['type'] === 'tool_use');
    assert.equal(validateRequest(request(messages), { ledger }), null);
    const compacted = [{ role: 'user', content: 'task + summary' }, ...messages.slice(3)].map((m) => ({
      ...m,
      content: Array.isArray(m.content)
        ? m.content.filter((b) => b['type'] !== 'thinking' && b['type'] !== 'redacted_thinking')
        : m.content,
    }));
    assert.equal(validateRequest(request(compacted), { ledger }), null);
  });

  it('with prefix_mismatch_behavior "drop_block" accepts and lists the dropped blocks', () => {
    const ledger = new ThinkingLedger();
    const messages = clone(conversation(ledger, 2)) as Msg[];
    const thinking = { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } };
    const body = request(messages, { system: 'changed', thinking });
    assert.equal(validateRequest(body, { ledger }), null);
    assert.deepEqual(
      ledger.check(body).dropped.map((d) => d['path']),
      ['messages.1.content.0', 'messages.1.content.1', 'messages.3.content.0', 'messages.3.content.1'],
    );
  });

  it("leaves out, without an error, another account's blocks (Sonnet 5.5) and blocks the model cannot read", () => {
    const ledger = new ThinkingLedger();
    const messages: unknown[] = [{ role: 'user', content: 'go' }];
    const step: ResponseStep = { content: [{ type: 'text', text: 'Reading.' }, use('t1')] };
    const shaped = preservedThinking(step, request(messages), ledger, true, 1, 'key-a');
    messages.push(
      { role: 'assistant', content: ResponseStep.parse(shaped).content.map(plainBlock) },
      { role: 'user', content: [result('t1')] },
    );
    assert.equal(validateRequest(request(messages), { ledger, account: 'key-a' }), null);
    assert.deepEqual(ledger.check(request(messages), 'key-a').dropped, []);
    assert.equal(validateRequest(request(messages), { ledger, account: 'key-b' }), null);
    assert.deepEqual(
      ledger.check(request(messages), 'key-b').dropped.map((d) => d['reason']),
      ['account_mismatch', 'account_mismatch'],
    );
    assert.deepEqual(
      ledger.check({ ...request(messages), model: 'claude-opus-5-5' }, 'key-a').dropped.map((d) => d['reason']),
      ['model_mismatch', 'model_mismatch'],
    );
  });

  it('does not check models without preserved thinking', () => {
    const ledger = new ThinkingLedger();
    const messages = conversation(ledger, 2);
    assert.equal(validateRequest({ ...request(messages, { system: 'changed' }), model: 'claude-sonnet-4-6' }, { ledger }), null);
  });

  it('refuses thinking "disabled", a forced tool_choice and between_tools at xhigh or max on the default model', () => {
    const base = request([{ role: 'user', content: 'hi' }]);
    assert.equal(validateRequest({ ...base, thinking: { type: 'disabled' } })?.rule, 'thinking_setting');
    assert.match(validateRequest({ ...base, thinking: { type: 'disabled' } })!.message, /between_tools/);
    assert.equal(validateRequest({ ...base, model: 'claude-sonnet-4-6', thinking: { type: 'disabled' } }), null);
    assert.equal(validateRequest({ ...base, tool_choice: { type: 'any' } })?.rule, 'tool_choice');
    assert.equal(validateRequest({ ...base, tool_choice: { type: 'tool', name: 'read_file' } })?.rule, 'tool_choice');
    assert.equal(validateRequest({ ...base, tool_choice: { type: 'auto' } }), null);
    for (const effort of ['xhigh', 'max'])
      assert.equal(validateRequest({ ...base, thinking: { type: 'between_tools' }, output_config: { effort } })?.rule, 'thinking_setting');
    assert.equal(validateRequest({ ...base, thinking: { type: 'between_tools' }, output_config: { effort: 'high' } }), null);
  });
});

describe('the fake server in the default model shape (real SDK, streaming)', () => {
  let fake: FakeAnthropic | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('streams signed thinking blocks, takes them back unchanged, refuses a changed prefix', async () => {
    const step: ResponseStep = {
      content: [
        { type: 'text', text: 'Reading.' },
        { ...use('t1'), input: { path: 'a' } },
      ],
      stop_reason: 'tool_use',
    };
    fake = await startFakeAnthropic([step, { content: [{ type: 'text', text: 'Done.' }] }, { content: [{ type: 'text', text: 'x' }] }], {
      defaultModelShape: true,
    });
    const client = new Anthropic({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
    const thinkingSeen: string[] = [];
    const first = client.messages.stream({
      model: MODEL,
      max_tokens: 256,
      system: 'Be brief.',
      tools,
      messages: [{ role: 'user', content: 'go' }],
    } as never);
    first.on('thinking', (delta) => thinkingSeen.push(delta));
    const answered = await first.finalMessage();
    assert.deepEqual(
      answered.content.map((b) => b.type),
      ['thinking', 'thinking', 'tool_use'],
    );
    assert.deepEqual(thinkingSeen, [], 'display omitted: no thinking text');
    const history = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: answered.content },
      { role: 'user', content: [result('t1')] },
    ];
    const again = await client.messages.create({ model: MODEL, max_tokens: 256, system: 'Be brief.', tools, messages: history } as never);
    assert.equal((again as { content: { text?: string }[] }).content.at(-1)?.text, 'Done.');
    await assert.rejects(
      client.messages.create({ model: MODEL, max_tokens: 256, system: 'Be briefer.', tools, messages: history } as never),
      (error: Error & { status?: number }) => error.status === 400 && /bound to a different conversation/.test(error.message),
    );
    assert.deepEqual(
      fake.refused.map((r) => r.rule),
      ['thinking_prefix'],
    );
  });
});
