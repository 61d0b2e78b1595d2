import { strict as assert } from 'node:assert';
import { plannedEntry } from '../../../src/core/runtime/calls';
import type { ToolContext } from '../../../src/core/tools/types';
import { effectOf } from '../../../src/host/vscode/timeline/view-build';
import { classifyTool, externalDescription, externalToolName, TOOL_NAME } from '../../../src/host/node/mcp/classify';
import { resultText } from '../../../src/host/node/mcp/client';
import { externalTool, MAX_EXTERNAL_OUTPUT_CHARS } from '../../../src/host/node/mcp/external-tool';

describe('external tools: ledger class from annotations, names', () => {
  it('readOnlyHint -> idempotent/auto; idempotentHint -> idempotent/ask; else non_idempotent/ask', () => {
    const read = classifyTool({ readOnlyHint: true, openWorldHint: false }, 'MCP server m');
    assert.deepEqual([read.idempotency, read.replayPolicy, read.sideEffects, read.warnings], ['idempotent', 'auto', ['none'], []]);
    const idem = classifyTool({ readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false }, 'MCP server m');
    assert.deepEqual([idem.idempotency, idem.replayPolicy, idem.warnings], ['idempotent', 'ask', ['destructive']]);
    assert.match(idem.sideEffects[0]!, /calls MCP server m: may change state outside the workspace \(destructive\)/);
    const plain = classifyTool({ idempotentHint: false, destructiveHint: false, openWorldHint: false }, 'MCP server m');
    assert.deepEqual([plain.idempotency, plain.replayPolicy, plain.warnings], ['non_idempotent', 'ask', []]);
    // No annotations: the MCP defaults (destructive, open world) and the strictest class.
    const none = classifyTool(undefined, 'VS Code tool');
    assert.deepEqual([none.idempotency, none.replayPolicy, none.warnings], ['non_idempotent', 'ask', ['destructive', 'open world']]);
  });

  it('names are server__tool in the Anthropic pattern, unique', () => {
    const taken = new Set(['read_file']);
    const a = externalToolName('my.server', 'do thing/now', taken);
    assert.equal(a, 'my_server__do_thing_now');
    taken.add(a);
    assert.equal(externalToolName('my.server', 'do thing/now', taken), 'my_server__do_thing_now_2');
    const long = externalToolName('s'.repeat(40), 't'.repeat(80), taken);
    assert.match(long, TOOL_NAME);
    assert.equal(long.length, 64);
  });

  it('a description is bounded, stripped of control characters and labelled with its source', () => {
    const text = externalDescription('MCP server m', `hi\u0007 there ${'x'.repeat(5000)}`, ['open world']);
    assert.ok(text.startsWith('(MCP server m [open world]) hi  there'));
    assert.ok(text.length < 2_100);
  });
});

describe('external tool results: text, bounded', () => {
  it('text blocks as is, other kinds named, structured content when there is no text', () => {
    const text = resultText({
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///x', text: 'inside' } },
        { type: 'resource_link', uri: 'file:///y', name: 'y' },
      ],
    });
    assert.equal(text, 'hello\n[image content omitted: image/png]\ninside\n[resource link: file:///y]');
    assert.equal(resultText({ content: [], structuredContent: { a: 1 } }), '{"a":1}');
  });

  it('a huge result is cut at the bound and says so; an error result stays an error', async () => {
    const huge = resultText({ content: [{ type: 'text', text: 'x'.repeat(MAX_EXTERNAL_OUTPUT_CHARS + 10) }] });
    assert.ok(huge.length < MAX_EXTERNAL_OUTPUT_CHARS + 100);
    assert.match(huge, /\[output truncated: 65546 characters in all\]$/);
    const tool = externalTool({
      name: 's__t',
      where: 'MCP server s',
      description: 'd',
      inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      hints: undefined,
      call: async () => ({ content: 'boom', isError: true }),
    });
    assert.equal(tool.input.safeParse({}).success, false, 'the schema checks the input');
    assert.equal(tool.input.safeParse({ n: 1 }).success, true);
    const out = await tool.execute({ n: 1 }, { signal: new AbortController().signal } as ToolContext, []);
    assert.deepEqual(out, { content: 'boom', isError: true });
  });
});

describe('external tools in the ledger and the timeline', () => {
  it('a started call of a destructive, open-world tool shows those hints as its effect, not reversible', () => {
    const tool = externalTool({
      name: 'web__post',
      where: 'MCP server web',
      description: 'posts',
      inputSchema: { type: 'object' },
      hints: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      call: async () => ({ content: 'ok' }),
    });
    const entry = { ...plannedEntry({ type: 'tool_use', id: 'toolu_1', name: 'web__post', input: {} }, tool, 1, 0), startedAt: 1 };
    assert.deepEqual([entry.idempotency, entry.replayPolicy], ['non_idempotent', 'ask']);
    assert.deepEqual(effectOf(entry), {
      effects: ['calls MCP server web: may change state outside the workspace (destructive, open world)'],
      compensation: 'not reversible',
      reversible: false,
    });
  });
});
