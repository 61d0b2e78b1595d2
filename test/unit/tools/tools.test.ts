import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import type { Patch } from '../../../src/core/patches/schema';
import { applyPreparedWrite } from '../../../src/core/patches/record';
import { silentLog } from '../../../src/core/ports';
import { MemoryCheckpointStore } from '../../support/memory-store';
import { createToolRegistry, toolSpec } from '../../../src/core/tools/registry';
import type { PreparedWrite, ToolContext } from '../../../src/core/tools/types';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { readText, tempDir, writeFiles } from '../runtime/harness';

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

  it('declares idempotency, policy and compensation', () => {
    const declared = registry.list().map((t) => [t.name, t.idempotency, t.replayPolicy]);
    assert.deepEqual(declared, [
      ['read_file', 'idempotent', 'auto'],
      ['list_dir', 'idempotent', 'auto'],
      ['search_text', 'idempotent', 'auto'],
      ['find_files', 'idempotent', 'auto'],
      ['write_file', 'conditional', 'auto'],
      ['edit_file', 'conditional', 'auto'],
      ['delete_file', 'conditional', 'auto'],
      ['run_command', 'non_idempotent', 'ask'],
      ['update_plan', 'idempotent', 'auto'],
    ]);
    assert.equal(tool('run_command').compensation, 'not reversible');
  });

  it('per-tool policy overrides from configuration', () => {
    const custom = createToolRegistry({ overrides: { run_command: { replayPolicy: 'never' }, edit_file: { replayPolicy: 'ask' } } });
    assert.equal(custom.get('run_command')!.replayPolicy, 'never');
    assert.equal(custom.get('edit_file')!.replayPolicy, 'ask');
    assert.throws(() => createToolRegistry({ overrides: { run_command: { replayPolicy: 'sometimes' } } as never }));
  });

  it('gives the API a JSON schema per tool', () => {
    const spec = toolSpec(tool('edit_file'));
    assert.equal(spec.input_schema['type'], 'object');
    assert.deepEqual(spec.input_schema['required'], ['path', 'old_string', 'new_string']);
    assert.equal(spec.input_schema['$schema'], undefined);
    assert.deepEqual(
      registry.specs().map((s) => s.name),
      registry.list().map((t) => t.name),
    );
  });

  it('edit_file replaces exactly one occurrence and explains otherwise', async () => {
    await assert.rejects(run('edit_file', { path: 'a.txt', old_string: 'beta', new_string: 'x' }), /occurs 2 times in a\.txt/);
    await assert.rejects(run('edit_file', { path: 'a.txt', old_string: 'delta', new_string: 'x' }), /was not found in a\.txt/);
    const { prepared, output } = await run('edit_file', { path: 'a.txt', old_string: 'alpha beta', new_string: 'ALPHA' });
    assert.equal(readText(root, 'a.txt'), 'ALPHA\nbeta\n');
    assert.equal(prepared.length, 1);
    assert.notEqual(prepared[0]!.beforeHash, prepared[0]!.afterHash);
    assert.equal(output.content, 'edited a.txt');
  });

  it('write_file creates, delete_file deletes, both with write-ahead intents', async () => {
    const created = await run('write_file', { path: 'new/c.txt', content: 'sea' });
    assert.equal(created.prepared[0]!.beforeHash, 'absent');
    assert.equal(readText(root, 'new/c.txt'), 'sea');
    const deleted = await run('delete_file', { path: 'new/c.txt' });
    assert.equal(deleted.prepared[0]!.afterHash, 'absent');
    await assert.rejects(run('delete_file', { path: 'new/c.txt' }), /does not exist/);
  });

  it('a write prepared before someone else changed the file is refused', async () => {
    const t = tool('edit_file');
    const input = t.input.parse({ path: 'dir/b.txt', old_string: 'gamma', new_string: 'delta' });
    const prepared = await t.prepare!(input, ctx);
    writeFiles(root, { 'dir/b.txt': 'gamma and user\n' });
    await assert.rejects(t.execute(input, ctx, prepared), /changed after the edit was prepared/);
    assert.equal(readText(root, 'dir/b.txt'), 'gamma and user\n');
  });
});
