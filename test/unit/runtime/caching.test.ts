import { strict as assert } from 'node:assert';
import { withCacheBreakpoints } from '../../../src/core/model/cache';
import type { MessageParam } from '../../../src/core/model/messages';
import type { StoredRecord } from '../../../src/core/store/records';
import { answer, harness, reply, SETTINGS, toolUse, type Harness } from './harness';

/** A script of `steps` read_file calls, then an answer. */
function readingScript(steps: number) {
  return [
    ...Array.from({ length: steps }, (_, i) =>
      reply([{ type: 'text', text: `Step ${i}.` }, toolUse(`t${i}`, 'read_file', { path: 'a.txt' })]),
    ),
    answer('Done.'),
  ];
}

function withoutCacheControl(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'cache_control' ? undefined : v)));
}

function countMarks(body: unknown): number {
  return (JSON.stringify(body).match(/"cache_control"/g) ?? []).length;
}

describe('prompt caching', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('reads >= 90% of the input tokens of a 50-step run from the cache, and records and prices them per step', async () => {
    h = await harness({ files: { 'a.txt': 'some file content\n'.repeat(20) }, script: readingScript(50), fake: { promptCaching: true } });
    const outcome = await h
      .runtime()
      .start({ task: 'read it fifty times', settings: { ...SETTINGS, maxTurns: 60 }, system: 'You are careful.' });
    assert.equal(outcome.status, 'completed', outcome.reason);
    assert.equal(h.fake.usages.length, 51);
    const total = h.fake.usages.reduce((n, u) => n + u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, 0);
    const read = h.fake.usages.reduce((n, u) => n + u.cache_read_input_tokens, 0);
    assert.ok(read / total >= 0.9, `cache read share ${read / total}`);
    for (const request of h.fake.requests) assert.ok(countMarks(request.body) <= 4, 'at most 4 breakpoints');
    const records = await h.records(outcome.runId);
    const usages = records.filter((r): r is Extract<StoredRecord, { type: 'usage' }> => r.type === 'usage');
    assert.equal(usages.length, 51);
    assert.deepEqual(
      usages.map((u) => u.cacheReadInputTokens),
      h.fake.usages.map((u) => u.cache_read_input_tokens),
    );
    const last = usages.at(-1)!;
    // claude-sonnet-4-6: $3 input, $15 output, $3.75 cache write, $0.30 cache read per MTok.
    const expected =
      (last.inputTokens * 3 + last.outputTokens * 15 + last.cacheCreationInputTokens * 3.75 + last.cacheReadInputTokens * 0.3) / 1e6;
    assert.ok(last.priced && Math.abs(last.costUsd - expected) < 1e-12, `${last.costUsd} vs ${expected}`);
  });

  it('never stores a cache mark: the journal holds the messages the API got, without their marks', async () => {
    h = await harness({ files: { 'a.txt': 'x\n' }, script: readingScript(3), fake: { promptCaching: true } });
    const outcome = await h.runtime().start({ task: 'read', settings: SETTINGS, system: 'sys' });
    const records = await h.records(outcome.runId);
    assert.equal(countMarks(records), 0);
    const lastBody = h.fake.requests.at(-1)!.body as { messages: MessageParam[]; system: unknown; tools: unknown[] };
    assert.ok(countMarks(lastBody.messages) === 2 && countMarks(lastBody.system) === 1 && countMarks(lastBody.tools) === 1);
    const journal = records.flatMap((r) => (r.type === 'message' ? [r.message] : []));
    const sent = withoutCacheControl(lastBody.messages) as MessageParam[];
    // The task went as a string and comes back as one text block: the same content to the API.
    assert.deepEqual(sent.slice(1), journal.slice(1, sent.length));
  });

  it('marks copies: the messages it is given are not changed', () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'task' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, toolUse('a', 'read_file', {})] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'r' }] },
    ];
    const before = JSON.stringify(messages);
    const cached = withCacheBreakpoints([{ name: 'x', description: 'd', input_schema: {} }], undefined, messages);
    assert.equal(JSON.stringify(messages), before);
    assert.equal(countMarks(cached), 3);
    assert.equal(cached.system, undefined);
    assert.deepEqual(cached.messages[0]!.content, [{ type: 'text', text: 'task', cache_control: { type: 'ephemeral' } }]);
  });
});
