import { strict as assert } from 'node:assert';
import { ContentBlock, MessageParam, toolUsesOf } from '../../../src/core/model/messages';

describe('message schemas', () => {
  it('checks a known block type against its own schema, keeps every field, and takes any other typed block as it is', () => {
    const thinking = { type: 'thinking', thinking: 'hmm', signature: 'sig' };
    const text = { type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } };
    const use = { type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a' } };
    const result = { type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'x' }], is_error: false };
    for (const block of [thinking, text, use, result]) assert.deepEqual(ContentBlock.parse(block), block);
    // A tool_use without its id is no ToolUseBlock: it stays an other block, and no call is taken from it.
    const broken = { type: 'tool_use', name: 'read_file', input: {} };
    assert.deepEqual(ContentBlock.parse(broken), broken);
    assert.deepEqual(toolUsesOf({ role: 'assistant', content: [broken, use] as never }), [use]);
    assert.equal(ContentBlock.safeParse({ text: 'no type' }).success, false);
    assert.equal(ContentBlock.safeParse({ type: 7 }).success, false);
    assert.equal(MessageParam.safeParse({ role: 'system', content: 'x' }).success, false);
    assert.equal(
      MessageParam.safeParse({ role: 'user', content: [{ type: 'tool_result', tool_use_id: '' }] }).success,
      true,
      'an empty id is an other block',
    );
  });
});
