import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverProgramDirs } from '../../../src/host/node/mcp/client';
import { tempDir } from '../runtime/harness';

// What of a stdio server's own files the sandbox shows it (read-only, even under a private /tmp):
// a script's folder, and the packages it imports (the nearest node_modules above it).

describe('MCP: the folders a server needs to start', () => {
  let root = '';
  beforeEach(() => {
    root = tempDir('server-dirs');
    mkdirSync(join(root, 'project', 'node_modules', 'pkg', 'dist'), { recursive: true });
    mkdirSync(join(root, 'project', 'tools', 'mcp'), { recursive: true });
    writeFileSync(join(root, 'project', 'tools', 'mcp', 'server.mjs'), '');
    writeFileSync(join(root, 'project', 'node_modules', 'pkg', 'dist', 'cli.js'), '');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a script outside node_modules: its folder and the nearest node_modules above it (the packages it imports)', () => {
    assert.deepEqual(serverProgramDirs('node', [join(root, 'project', 'tools', 'mcp', 'server.mjs')]), [
      join(root, 'project', 'tools', 'mcp'),
      join(root, 'project', 'node_modules'),
    ]);
  });

  it('a script inside node_modules: that whole node_modules, once', () => {
    assert.deepEqual(serverProgramDirs('node', [join(root, 'project', 'node_modules', 'pkg', 'dist', 'cli.js')]), [
      join(root, 'project', 'node_modules'),
    ]);
  });

  it('words that are no absolute existing path add nothing', () => {
    assert.deepEqual(serverProgramDirs('npx', ['-y', '@scope/server', 'relative/file.js', join(root, 'missing.mjs')]), []);
  });
});
