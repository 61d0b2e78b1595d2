import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { tempDir, writeFiles } from '../../unit/runtime/harness';
import { runTool } from '../../unit/tools/search-support';

describe('read_file pages, regular files only', () => {
  let root: string;
  const read = (input: unknown) => runTool(root, 'read_file', input, null);
  beforeEach(() => (root = tempDir('read')));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a named pipe, a socket or a folder fails at once, never blocks', async () => {
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const started = Date.now();
    await assert.rejects(read({ path: 'pipe' }), /not a regular file/);
    // The workspace itself refuses it too (edit_file and the patch checks read through it).
    await assert.rejects(new NodeWorkspace({ roots: [root] }).read('pipe'), /is a named pipe \(FIFO\), not a regular file/);
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(join(root, 'sock'), resolve));
    try {
      await assert.rejects(new NodeWorkspace({ roots: [root] }).read('sock'), /not a regular file/);
    } finally {
      server.close();
    }
    writeFiles(root, { 'dir/x.txt': 'x' });
    await assert.rejects(read({ path: 'dir' }), /is a folder; use list_dir/);
  });
});
