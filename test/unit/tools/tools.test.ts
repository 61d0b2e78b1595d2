import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import type { Patch } from '../../../src/core/patches/schema';
import { applyPreparedWrite } from '../../../src/core/patches/record';
import { silentLog } from '../../../src/core/ports';
import { MemoryCheckpointStore } from '../../support/memory-store';
import { ToolError } from '../../../src/core/tools/errors';
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

  it('run_command reports exit code and output, with errors flagged', async () => {
    const ok = await run('run_command', { command: 'echo out; echo err 1>&2' });
    assert.match(ok.output.content, /^exit code 0 after \d+ ms\n--- stdout ---\nout\n\n--- stderr ---\nerr\n$/);
    assert.ok(!ok.output.isError);
    const failed = await run('run_command', { command: 'exit 3' });
    assert.match(failed.output.content, /^exit code 3/);
    assert.equal(failed.output.isError, true);
  });
});

describe('node command runner', () => {
  const runner = createNodeCommandRunner();
  const cwd = process.cwd();

  it('kills the whole process group on timeout', async () => {
    const result = await runner.run('sleep 5 & sleep 5; echo never', { cwd, timeoutMs: 200, maxOutputBytes: 1000 });
    assert.equal(result.timedOut, true);
    assert.ok(result.durationMs < 3000);
    assert.equal(result.stdout, '');
  });

  it("never hands the agent's API key to a command", async () => {
    const keyed = createNodeCommandRunner({
      env: { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-test-WITHHELD', KEEP_ME: 'visible' },
      passEnv: () => ['KEEP_ME', 'ANTHROPIC_API_KEY'],
    });
    const result = await keyed.run('echo "key=[$ANTHROPIC_API_KEY] keep=[$KEEP_ME]"', { cwd, timeoutMs: 5000, maxOutputBytes: 1000 });
    assert.equal(result.stdout.trim(), 'key=[] keep=[visible]');
  });

  it('bounds the output', async () => {
    const result = await runner.run("head -c 100000 /dev/zero | tr '\\0' x", { cwd, timeoutMs: 5000, maxOutputBytes: 1000 });
    assert.equal(result.truncated, true);
    assert.equal(result.stdout.length, 500);
    assert.equal(result.exitCode, 0);
  });

  it('stops on abort: the group gets SIGTERM and the result says cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await runner.run('sleep 5', { cwd, timeoutMs: 10000, maxOutputBytes: 1000, signal: controller.signal });
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGTERM');
    assert.equal(result.cancelled, true);
    assert.ok(result.durationMs < 2000);
  });

  it('returns within timeout + 2 s when a detached descendant holds the output open, and says so', async () => {
    const started = Date.now();
    const result = await runner.run('setsid sleep 20 & echo started', { cwd, timeoutMs: 1000, maxOutputBytes: 1000 });
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    assert.equal(result.stdout, 'started\n');
    assert.equal(result.exitCode, 0);
    assert.match(result.stillRunning ?? '', /still holds its output open and may still be running/);
  });

  it('a timeout of a command that waits on a detached child returns within timeout + 2 s', async () => {
    const started = Date.now();
    const result = await runner.run('setsid sleep 20; echo never', { cwd, timeoutMs: 1000, maxOutputBytes: 1000 });
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    assert.equal(result.timedOut, true);
    assert.match(result.stillRunning ?? '', /may still be running/);
  });

  it('cancel returns at once too, and a shell that ignores SIGTERM is killed', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const cancelled = await runner.run('setsid sleep 20 & sleep 20', {
      cwd,
      timeoutMs: 60_000,
      maxOutputBytes: 1000,
      signal: controller.signal,
    });
    assert.ok(Date.now() - started < 2200, `took ${Date.now() - started} ms`);
    assert.equal(cancelled.cancelled, true);
    const stubborn = await runner.run('trap "" TERM; sleep 20', { cwd, timeoutMs: 300, maxOutputBytes: 1000 });
    assert.equal(stubborn.signal, 'SIGKILL');
    assert.ok(stubborn.durationMs < 2300);
  });

  it('a background job left in the group is reported as still running', async () => {
    const result = await runner.run('sleep 3 >/dev/null 2>&1 & echo ok', { cwd, timeoutMs: 5000, maxOutputBytes: 1000 });
    assert.equal(result.stdout, 'ok\n');
    assert.match(result.stillRunning ?? '', /processes of its process group \(\d+\) are still running/);
  });

  it('withholds any variable whose value is the key, and keys given as secrets', async () => {
    const key = 'sk-ant-test-COPY';
    const keyed = createNodeCommandRunner({
      env: { ...process.env, ANTHROPIC_AUTH_TOKEN: key, MY_COPY: key, OTHER: 'sk-ant-secret-store', KEEP_ME: 'visible' },
      secrets: () => ['sk-ant-secret-store'],
      passEnv: () => ['KEEP_ME', 'MY_COPY', 'OTHER'],
    });
    const result = await keyed.run('env', { cwd, timeoutMs: 5000, maxOutputBytes: 100_000 });
    assert.doesNotMatch(result.stdout, /sk-ant-/);
    assert.match(result.stdout, /^KEEP_ME=visible$/m);
  });

  it("runs with the host's HOME in the given folder", async () => {
    const result = await runner.run('echo "$HOME:$(pwd)"', { cwd: '/tmp', timeoutMs: 5000, maxOutputBytes: 1000 });
    assert.equal(result.stdout.trim(), `${process.env['HOME']}:/tmp`);
  });
});
