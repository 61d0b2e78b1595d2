import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import type { Patch } from '../../../src/core/patches/schema';
import { applyPreparedWrite } from '../../../src/core/patches/record';
import { silentLog } from '../../../src/core/ports';
import { MemoryCheckpointStore } from '../../support/memory-store';
import { ToolError } from '../../../src/core/tools/errors';
import { createToolRegistry } from '../../../src/core/tools/registry';
import type { PreparedWrite, ToolContext } from '../../../src/core/tools/types';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { tempDir, writeFiles } from '../../unit/runtime/harness';

describe('tools', () => {
  let root: string;
  let ctx: ToolContext;
  const registry = createToolRegistry();
  const tool = (name: string) => registry.get(name)!;

  beforeEach(() => {
    root = tempDir('tools');
    writeFiles(root, { 'a.txt': 'alpha beta\nbeta\n', 'dir/b.txt': 'gamma\n' });
    const workspace = new NodeWorkspace({ roots: [root] });
    const store = new MemoryCheckpointStore();
    let n = 0;
    ctx = {
      runId: 'r',
      callId: 'c',
      stepId: 1,
      workspace,
      // Only base variables: no note of withheld ones, so the result's format is exact.
      commands: createNodeCommandRunner({ env: { PATH: process.env['PATH'], HOME: process.env['HOME'] } }),
      signal: new AbortController().signal,
      applyWrite: (write: PreparedWrite): Promise<Patch> =>
        applyPreparedWrite(
          { workspace, blobs: store, clock: { now: () => 1 }, log: silentLog, newId: () => `p${++n}` },
          { runId: 'r', stepId: 1, toolCallId: 'c' },
          write,
        ),
    };
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  async function run(name: string, input: unknown) {
    const t = tool(name);
    const parsed = t.input.parse(input);
    const prepared = t.prepare ? await t.prepare(parsed, ctx) : [];
    return { prepared, output: await t.execute(parsed, ctx, prepared) };
  }

  it('read_file, list_dir and search_text read the workspace', async () => {
    assert.equal((await run('read_file', { path: 'a.txt' })).output.content, 'alpha beta\nbeta\n');
    assert.equal((await run('read_file', { path: 'a.txt', offset: 2, limit: 1 })).output.content, 'beta\n[lines 2-2 of 2; end of file]');
    assert.equal((await run('list_dir', {})).output.content, 'a.txt  16 B\ndir/');
    assert.match(
      (await run('search_text', { pattern: 'beta' })).output.content,
      /^a\.txt\n {2}1: alpha beta\n {2}2: beta\n\[2 matching lines in 1 file; complete/,
    );
    assert.match((await run('search_text', { pattern: '^gam', regex: true })).output.content, /^dir\/b\.txt\n {2}1: gamma\n/);
    assert.equal((await run('find_files', { pattern: '*.txt' })).output.content, 'a.txt\ndir/b.txt\n[2 files; complete]');
    await assert.rejects(run('read_file', { path: 'missing.txt' }), ToolError);
  });

  it('run_command reports exit code and output, with errors flagged', async () => {
    const ok = await run('run_command', { command: 'echo out; echo err 1>&2' });
    assert.match(ok.output.content, /^exit code 0 after \d+ ms\n--- stdout ---\nout\n\n--- stderr ---\nerr\n$/);
    assert.ok(!ok.output.isError);
    const failed = await run('run_command', { command: 'exit 3' });
    assert.match(failed.output.content, /^exit code 3/);
    assert.equal(failed.output.isError, true);
  });
});
