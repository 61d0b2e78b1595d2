import { strict as assert } from 'node:assert';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';

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
    const result = await runner.run('sleep 30', { cwd, timeoutMs: 60_000, maxOutputBytes: 1000, signal: controller.signal });
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGTERM');
    assert.equal(result.cancelled, true);
    assert.ok(result.durationMs < 10_000, `${result.durationMs} ms: it waited for the sleep`);
  });

  it('returns after the timeout and a 2 s grace, not when a detached descendant holding the output open ends, and says so', async () => {
    const started = Date.now();
    const result = await runner.run('setsid sleep 20 & echo started', { cwd, timeoutMs: 1000, maxOutputBytes: 1000 });
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms: it waited for the detached sleep`);
    assert.equal(result.stdout, 'started\n');
    assert.equal(result.exitCode, 0);
    assert.match(result.stillRunning ?? '', /still holds its output open and may still be running/);
  });

  it('a timeout of a command that waits on a detached child returns after its grace, not when the child ends', async () => {
    const started = Date.now();
    const result = await runner.run('setsid sleep 20; echo never', { cwd, timeoutMs: 1000, maxOutputBytes: 1000 });
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms: it waited for the detached sleep`);
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
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
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
