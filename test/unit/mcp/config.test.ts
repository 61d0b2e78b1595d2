import { strict as assert } from 'node:assert';
import { expandWorkspaceFolder, McpConfigError, mergeEntries, parseMcpConfig, serverFingerprint } from '../../../src/host/node/mcp/config';

describe('MCP configuration (.vscode/mcp.json shape)', () => {
  it('reads stdio and http servers, with comments and defaults', () => {
    const text = `{
      // VS Code allows comments here
      "servers": {
        "memory": { "command": "node", "args": ["server.js", "\${workspaceFolder}/m.json"], "env": { "A": "1" } },
        "remote": { "type": "http", "url": "https://example.test/mcp" },
      }
    }`;
    const entries = parseMcpConfig(text, '/ws/.vscode/mcp.json', 'workspace');
    assert.deepEqual(
      entries.map((e) => [e.name, e.source, e.config.type ?? 'stdio']),
      [
        ['memory', 'workspace', 'stdio'],
        ['remote', 'workspace', 'http'],
      ],
    );
    const memory = expandWorkspaceFolder(entries[0]!.config, '/ws');
    assert.ok(memory.type !== 'http');
    assert.deepEqual(memory.args, ['server.js', '/ws/m.json']);
    assert.deepEqual(memory.env, { A: '1' });
  });

  it('a bad server is refused naming the file and the field', () => {
    assert.throws(
      () => parseMcpConfig('{"servers": {"memory": {"args": ["x"]}}}', '/ws/.vscode/mcp.json', 'workspace'),
      (error: unknown) => error instanceof McpConfigError && /^\/ws\/\.vscode\/mcp\.json: servers\.memory/.test(error.message),
    );
    assert.throws(
      () => parseMcpConfig('{"servers": {"web": {"type": "http", "url": "file:///etc/passwd"}}}', 'cfg.json', 'cli'),
      /cfg\.json: servers\.web\.url/,
    );
    assert.throws(() => parseMcpConfig('{"servers": {"a b": {"command": "x"}}}', 'cfg.json', 'cli'), /cfg\.json: servers\.a b/);
    assert.throws(() => parseMcpConfig('{"servers": ', 'cfg.json', 'cli'), /cfg\.json: not valid JSON/);
    assert.throws(
      () => parseMcpConfig('{"servers": {"m": {"command": "x", "envFile": ".env"}}}', 'cfg.json', 'cli'),
      /envFile: not supported/,
    );
  });

  it('a server named in two places is refused; the fingerprint changes with the command', () => {
    const a = parseMcpConfig('{"servers": {"m": {"command": "x"}}}', 'a.json', 'cli');
    const b = parseMcpConfig('{"servers": {"m": {"command": "y"}}}', 'b.json', 'workspace');
    assert.throws(() => mergeEntries(a, b), /"m" is named in both a\.json and b\.json/);
    assert.notEqual(serverFingerprint(a[0]!), serverFingerprint(b[0]!));
    assert.equal(serverFingerprint(a[0]!), serverFingerprint(parseMcpConfig('{"servers": {"m": {"command": "x"}}}', 'c.json', 'cli')[0]!));
  });
});
