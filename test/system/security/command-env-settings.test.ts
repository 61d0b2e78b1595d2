import { strict as assert } from 'node:assert';
import { resolve } from 'node:path';
import type { Log } from '../../../src/core/ports';
import type { ToolContext } from '../../../src/core/tools/types';
import { startMcpServers } from '../../../src/host/node/mcp/client';
import { parseMcpConfig } from '../../../src/host/node/mcp/config';

const ROOT = resolve(__dirname, '..', '..', '..');

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
