import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Log } from '../../../src/core/ports';
import { createToolRegistry, BUILTIN_TOOLS } from '../../../src/core/tools/registry';
import type { ToolContext } from '../../../src/core/tools/types';
import { startMcpServers, type McpConnections } from '../../../src/host/node/mcp/client';
import { parseMcpConfig } from '../../../src/host/node/mcp/config';
import { tempDir } from '../../unit/runtime/harness';
import { memoryConfig } from './memory-server';

const quiet: Log = { log: () => undefined };
const ctx = { signal: new AbortController().signal } as ToolContext;

describe('MCP client: a real server over stdio', function () {
  this.timeout(30_000);
  let dir: string;
  let mcp: McpConnections;

  before(async () => {
    dir = tempDir('mcp-client');
    const entries = parseMcpConfig(memoryConfig(join(dir, 'memory.jsonl')), 'test.json', 'cli');
    mcp = await startMcpServers(entries, { log: quiet, folder: dir, reserved: BUILTIN_TOOLS.map((t) => t.name) });
  });
  after(async () => {
    await mcp.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the tools as server__tool with their JSON schema and the ledger class of their annotations', () => {
    assert.deepEqual(mcp.failures, []);
    const byName = new Map(mcp.tools.map((t) => [t.name, t]));
    assert.ok(byName.has('memory__create_entities') && byName.has('memory__read_graph'), [...byName.keys()].join(', '));
    const read = byName.get('memory__read_graph')!;
    assert.deepEqual([read.idempotency, read.replayPolicy], ['idempotent', 'auto']);
    const create = byName.get('memory__create_entities')!;
    assert.deepEqual([create.idempotency, create.replayPolicy], ['non_idempotent', 'ask']);
    const del = byName.get('memory__delete_entities')!;
    assert.deepEqual([del.idempotency, del.replayPolicy], ['idempotent', 'ask']);
    assert.match(del.summarize({ entityNames: ['a'] }), /^call memory__delete_entities \[destructive\] \{"entityNames":\["a"\]\}/);
    assert.match(create.description, /^\(MCP server memory\) /);
    // The registry takes them beside the built-in tools; the model sees the server's own schema.
    const registry = createToolRegistry({
      tools: [...BUILTIN_TOOLS, ...mcp.tools],
      overrides: { memory__create_entities: { replayPolicy: 'never' } },
    });
    const spec = registry.specs().find((s) => s.name === 'memory__create_entities')!;
    assert.equal((spec.input_schema as { type: string }).type, 'object');
    assert.ok('entities' in (spec.input_schema as { properties: object }).properties);
    assert.equal(registry.get('memory__create_entities')!.replayPolicy, 'never', 'the per-tool setting overrides the annotations');
  });

  it('checks the input against the schema where it enters', () => {
    const create = mcp.tools.find((t) => t.name === 'memory__create_entities')!;
    assert.equal(create.input.safeParse({ entities: 'not a list' }).success, false);
    assert.equal(create.input.safeParse({ entities: [{ name: 'a', entityType: 't', observations: [] }] }).success, true);
  });

  it('a call runs on the server and its result comes back as text', async () => {
    const create = mcp.tools.find((t) => t.name === 'memory__create_entities')!;
    const read = mcp.tools.find((t) => t.name === 'memory__read_graph')!;
    const made = await create.execute({ entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote notes'] }] }, ctx, []);
    assert.equal(made.isError, undefined);
    assert.match(made.content, /Ada/);
    assert.ok(existsSync(join(dir, 'memory.jsonl')) && readFileSync(join(dir, 'memory.jsonl'), 'utf8').includes('"Ada"'));
    const graph = await read.execute({}, ctx, []);
    assert.match(graph.content, /wrote notes/);
  });

  it('a server that cannot start is reported and left out; the others still serve', async () => {
    const entries = parseMcpConfig(
      JSON.stringify({
        servers: {
          broken: { command: join(dir, 'no-such-program') },
          memory: JSON.parse(memoryConfig(join(dir, 'm2.jsonl'))).servers.memory,
        },
      }),
      'two.json',
      'cli',
    );
    const both = await startMcpServers(entries, { log: quiet });
    try {
      assert.equal(both.failures.length, 1);
      assert.match(both.failures[0]!, /^MCP server broken \(two\.json\) did not start: /);
      assert.ok(both.tools.some((t) => t.name === 'memory__read_graph'));
      assert.ok(!both.tools.some((t) => t.name.startsWith('broken__')));
    } finally {
      await both.close();
    }
  });
});

describe('MCP client: what a stdio server is given', function () {
  this.timeout(30_000);
  const EVERYTHING = resolve(__dirname, '../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

  it("a server gets a small default environment plus its own env: never the host's API key", async () => {
    const saved = process.env['ANTHROPIC_API_KEY'];
    process.env['ANTHROPIC_API_KEY'] = 'sk-ant-mcp-test-SECRET';
    const config = { servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { GIVEN_BY_CONFIG: 'yes' } } } };
    const mcp = await startMcpServers(parseMcpConfig(JSON.stringify(config), 'env.json', 'cli'), { log: quiet });
    try {
      assert.deepEqual(mcp.failures, []);
      const getEnv = mcp.tools.find((t) => t.name === 'everything__get-env');
      assert.ok(getEnv, mcp.tools.map((t) => t.name).join(', '));
      assert.deepEqual([getEnv.idempotency, getEnv.replayPolicy], ['idempotent', 'auto'], 'readOnlyHint');
      const out = await getEnv.execute({}, ctx, []);
      assert.match(out.content, /GIVEN_BY_CONFIG/);
      assert.match(out.content, /"PATH"/);
      assert.doesNotMatch(out.content, /sk-ant-mcp-test-SECRET|ANTHROPIC_API_KEY/);
    } finally {
      await mcp.close();
      if (saved === undefined) delete process.env['ANTHROPIC_API_KEY'];
      else process.env['ANTHROPIC_API_KEY'] = saved;
    }
  });
});
