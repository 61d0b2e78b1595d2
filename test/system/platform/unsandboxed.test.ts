import { strict as assert } from 'node:assert';
import { tmpdir } from 'node:os';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';

describe('commands without a sandbox are said to be so (a real command)', () => {
  it('the tool result of a command run with the sandbox switched off says so plainly', async () => {
    const runner = createNodeCommandRunner({ sandbox: () => undefined });
    const result = await runner.run('echo hi', { cwd: tmpdir(), timeoutMs: 10_000, maxOutputBytes: 1024 });
    assert.equal(result.exitCode, 0);
    assert.match(
      formatCommandResult(result),
      /--- sandbox ---\nThis command ran WITHOUT a sandbox \(the sandbox is switched off: agentCheckpoints\.sandbox or --no-sandbox\): it could read and change anything your user can\./,
    );
  });
});
