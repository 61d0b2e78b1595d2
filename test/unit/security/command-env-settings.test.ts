import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Log } from '../../../src/core/ports';
import type { ToolContext } from '../../../src/core/tools/types';
import { parseCli, UsageError } from '../../../src/host/cli/args';
import { startMcpServers } from '../../../src/host/node/mcp/client';
import { parseMcpConfig } from '../../../src/host/node/mcp/config';
import { readSettingsFrom, SettingsError, type SettingsSource } from '../../../src/host/vscode/settings-read';

const ROOT = resolve(__dirname, '..', '..', '..');

describe('what commands may have of the host environment: the person says, at user scope or on the command line', () => {
  it('agentCheckpoints.commandEnvironment comes from user scope only, is restricted in untrusted workspaces, and takes names or patterns', () => {
    const warnings: string[] = [];
    const source = (value: { globalValue?: unknown; workspaceValue?: unknown }): SettingsSource => ({
      inspect: (key) => (key === 'commandEnvironment' ? value : undefined),
      get: (key) => (key === 'commandEnvironment' ? (value.workspaceValue ?? value.globalValue) : undefined),
    });
    const settings = readSettingsFrom(source({ globalValue: ['JAVA_OPTS', 'MYAPP_*'], workspaceValue: ['*'] }), new Set(), (m) =>
      warnings.push(m),
    );
    assert.deepEqual(settings.commandEnvironment, ['JAVA_OPTS', 'MYAPP_*']);
    assert.ok(warnings.some((w) => w.includes('agentCheckpoints.commandEnvironment in the workspace or folder settings is ignored')));
    assert.throws(() => readSettingsFrom(source({ globalValue: ['A=B'] })), SettingsError);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('agentCheckpoints.commandEnvironment'));
    assert.equal(pkg.contributes.configuration.properties['agentCheckpoints.commandEnvironment']?.scope, 'application');
  });

  it('--pass-env NAME is repeatable, takes patterns and refuses what is not a name', () => {
    const run = ['run', '--workspace', 'w', '--task', 't'];
    assert.deepEqual(parseCli([...run, '--pass-env', 'JAVA_OPTS', '--pass-env', 'MYAPP_*']).passEnv, ['JAVA_OPTS', 'MYAPP_*']);
    assert.deepEqual(parseCli(run).passEnv, []);
    assert.deepEqual(parseCli(['worker', '--store', 'postgres://h/db', '--workspace', 'w', '--pass-env', 'X']).passEnv, ['X']);
    assert.throws(() => parseCli([...run, '--pass-env', 'A=B']), UsageError);
    assert.throws(() => parseCli([...run, '--pass-env', '']), UsageError);
  });
});

describe('an MCP server gets the built environment plus what its configuration names', function () {
  this.timeout(30_000);
  const EVERYTHING = resolve(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const HOST = {
    MYAPP_MODE: 'debug',
    MYAPP_TOKEN: 'myapp-mcp-envtest-token',
    GITHUB_TOKEN: 'ghp_mcp-envtest-host-value',
    DATABASE_URL: 'postgres://app:mcp-envtest-pw@db/app',
  };

  it('a pattern the person allowed passes only names that do not look like credentials; the configuration names one explicitly', async () => {
    const saved = Object.fromEntries(Object.keys(HOST).map((name) => [name, process.env[name]]));
    Object.assign(process.env, HOST);
    const logged: string[] = [];
    const log: Log = { log: (_level, message) => logged.push(message) };
    const config = {
      servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { GITHUB_TOKEN: 'given-by-config' } } },
    };
    const mcp = await startMcpServers(parseMcpConfig(JSON.stringify(config), 'env.json', 'cli'), {
      log,
      passEnv: ['MYAPP_*', 'DATABASE_*'],
    });
    try {
      assert.deepEqual(mcp.failures, []);
      const getEnv = mcp.tools.find((t) => t.name === 'everything__get-env');
      assert.ok(getEnv);
      const out = (await getEnv.execute({}, { signal: new AbortController().signal } as ToolContext, [])).content;
      assert.match(out, /"MYAPP_MODE": ?"debug"/);
      assert.match(out, /"GITHUB_TOKEN": ?"given-by-config"/);
      assert.ok(!out.includes('envtest'), out);
      assert.ok(
        logged.some(
          (line) => /MCP server everything: .*withheld.*\bDATABASE_URL\b.*\bMYAPP_TOKEN\b/.test(line) && !line.includes('GITHUB_TOKEN'),
        ),
        logged.join('\n'),
      );
    } finally {
      await mcp.close();
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
