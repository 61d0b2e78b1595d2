import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MessageParam } from '../../../src/core/model/messages';
import { ModelError, type ModelEvent, type ModelRequest } from '../../../src/core/model/provider';
import { createReplayProvider, parseReplayScript, ReplayScriptError } from '../../../src/core/model/replay';

const line = (n: number, stop = 'tool_use') =>
  JSON.stringify({
    id: `msg_${n}`,
    content: [
      { type: 'text', text: `answer ${n}` },
      ...(stop === 'tool_use' ? [{ type: 'tool_use', id: `toolu_${n}`, name: 'read_file', input: { path: `f${n}` } }] : []),
    ],
    stop_reason: stop,
    usage: { input_tokens: 10 * n, output_tokens: n },
  });
const SCRIPT = [line(1), line(2), line(3, 'end_turn')].join('\n') + '\n';

function requestWith(messages: MessageParam[]): ModelRequest {
  return { model: 'claude-sonnet-4-5', messages, tools: [], maxTokens: 100 };
}

/** A history after `steps` completed tool steps. */
function historyAfter(steps: number): MessageParam[] {
  const messages: MessageParam[] = [{ role: 'user', content: 'task' }];
  for (let i = 1; i <= steps; i += 1) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: {} }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'ok' }] });
  }
  return messages;
}

describe('replay provider', () => {
  it('plays responses in order as the history grows', async () => {
    const provider = createReplayProvider(SCRIPT);
    const ids: string[] = [];
    for (let step = 0; step < 3; step += 1) ids.push((await provider.complete(requestWith(historyAfter(step)))).id);
    assert.deepEqual(ids, ['msg_1', 'msg_2', 'msg_3']);
  });

  it('picks the response by the number of assistant messages, so a resumed run continues at the right line', async () => {
    const provider = createReplayProvider(SCRIPT);
    const resumed = await provider.complete(requestWith(historyAfter(2)));
    assert.equal(resumed.id, 'msg_3');
    assert.equal(resumed.stopReason, 'end_turn');
    const again = await provider.complete(requestWith(historyAfter(1)));
    assert.equal(again.id, 'msg_2', 'the same history gets the same answer');
  });

  it('maps usage and reports the requested model when the line names none', async () => {
    const response = await createReplayProvider(SCRIPT).complete(requestWith(historyAfter(1)));
    assert.deepEqual(response.usage, { inputTokens: 20, outputTokens: 2 });
    assert.equal(response.model, 'claude-sonnet-4-5');
  });

  it('emits progress events', async () => {
    const events: ModelEvent[] = [];
    await createReplayProvider(SCRIPT).complete(requestWith(historyAfter(0)), (e) => events.push(e));
    assert.deepEqual(events, [
      { type: 'text', text: 'answer 1' },
      { type: 'tool_use_start', name: 'read_file', id: 'toolu_1' },
    ]);
  });

  it('returns copies the caller cannot use to alter the script', async () => {
    const provider = createReplayProvider(SCRIPT);
    const first = await provider.complete(requestWith(historyAfter(0)));
    (first.content as { type: string; text?: string }[])[0]!.text = 'mutated';
    const second = await provider.complete(requestWith(historyAfter(0)));
    assert.deepEqual(second.content[0], { type: 'text', text: 'answer 1' });
  });

  it('gives a clear ModelError when the script is exhausted', async () => {
    const provider = createReplayProvider(SCRIPT, { source: 'demo.jsonl' });
    await assert.rejects(provider.complete(requestWith(historyAfter(3))), (error: unknown) => {
      assert.ok(error instanceof ModelError);
      assert.equal(error.kind, 'invalid_response');
      assert.match(error.message, /demo\.jsonl is exhausted.*3 assistant messages.*only 3 responses/);
      return true;
    });
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(
      createReplayProvider(SCRIPT).complete({ ...requestWith(historyAfter(0)), signal: controller.signal }),
      (e: unknown) => e instanceof ModelError && e.kind === 'aborted',
    );
  });

  it('names the line of bad JSON', () => {
    const text = `${line(1)}\n\n{"content": [oops\n`;
    assert.throws(
      () => parseReplayScript(text, 'x.jsonl'),
      (error: unknown) => {
        assert.ok(error instanceof ReplayScriptError);
        assert.equal(error.line, 3);
        assert.match(error.message, /^x\.jsonl, line 3: not JSON/);
        return true;
      },
    );
  });

  it('names the line and field of a response that is not a Messages API response', () => {
    const text = `${line(1)}\n${JSON.stringify({ content: [{ type: 'text', text: 'x' }] })}\n`;
    assert.throws(() => createReplayProvider(text, { source: 'y.jsonl' }), /y\.jsonl, line 2: not a Messages API response at stop_reason/);
    const badBlock = JSON.stringify({ content: [{ type: 'tool_use', id: '', name: 'x', input: {} }], stop_reason: 'tool_use' });
    assert.throws(() => createReplayProvider(badBlock), /line 1: not a Messages API response at content/);
  });

  it('refuses an empty script', () => {
    assert.throws(() => createReplayProvider('\n\n'), /no responses/);
  });

  it('the demo script is valid and ends with end_turn after a parallel tool step', () => {
    const text = readFileSync(join(__dirname, '..', '..', 'demo', 'replay.jsonl'), 'utf8');
    const responses = parseReplayScript(text, 'test/demo/replay.jsonl');
    assert.equal(responses.at(-1)?.stopReason, 'end_turn');
    const toolCounts = responses.map((r) => r.content.filter((b) => b.type === 'tool_use').length);
    assert.ok(toolCounts.includes(2), 'one step holds two parallel tool_use blocks');
    const names = responses.flatMap((r) => r.content.flatMap((b) => (b.type === 'tool_use' ? [String(b['name'])] : [])));
    for (const name of ['read_file', 'edit_file', 'run_command']) assert.ok(names.includes(name), name);
  });
});
