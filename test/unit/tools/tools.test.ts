import { strict as assert } from 'node:assert';
import { useToolFixture } from '../../support/tool-fixture';
import { createToolRegistry, toolSpec } from '../../../src/core/tools/registry';
import { readText, writeFiles } from '../runtime/harness';

describe('tools', () => {
  const f = useToolFixture();
  const registry = createToolRegistry();
  const tool = (name: string) => registry.get(name)!;

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
    await assert.rejects(f.run('edit_file', { path: 'a.txt', old_string: 'beta', new_string: 'x' }), /occurs 2 times in a\.txt/);
    await assert.rejects(f.run('edit_file', { path: 'a.txt', old_string: 'delta', new_string: 'x' }), /was not found in a\.txt/);
    const { prepared, output } = await f.run('edit_file', { path: 'a.txt', old_string: 'alpha beta', new_string: 'ALPHA' });
    assert.equal(readText(f.root, 'a.txt'), 'ALPHA\nbeta\n');
    assert.equal(prepared.length, 1);
    assert.notEqual(prepared[0]!.beforeHash, prepared[0]!.afterHash);
    assert.equal(output.content, 'edited a.txt');
  });

  it('write_file creates, delete_file deletes, both with write-ahead intents', async () => {
    const created = await f.run('write_file', { path: 'new/c.txt', content: 'sea' });
    assert.equal(created.prepared[0]!.beforeHash, 'absent');
    assert.equal(readText(f.root, 'new/c.txt'), 'sea');
    const deleted = await f.run('delete_file', { path: 'new/c.txt' });
    assert.equal(deleted.prepared[0]!.afterHash, 'absent');
    await assert.rejects(f.run('delete_file', { path: 'new/c.txt' }), /does not exist/);
  });

  it('a write prepared before someone else changed the file is refused', async () => {
    const t = tool('edit_file');
    const input = t.input.parse({ path: 'dir/b.txt', old_string: 'gamma', new_string: 'delta' });
    const prepared = await t.prepare!(input, f.ctx);
    writeFiles(f.root, { 'dir/b.txt': 'gamma and user\n' });
    await assert.rejects(t.execute(input, f.ctx, prepared), /changed after the edit was prepared/);
    assert.equal(readText(f.root, 'dir/b.txt'), 'gamma and user\n');
  });
});
