import { strict as assert } from 'node:assert';
import { tmpdir } from 'node:os';
import { buildSystemPrompt } from '../../../src/core/runtime/system-prompt';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { nodeHostFacts } from '../../../src/host/node/host-facts';
import { detectSandbox } from '../../../src/host/node/sandbox';

describe('commands without a sandbox are said to be so (a real command, the bwrap trial)', () => {
  it('the tool result of a command run with the sandbox switched off says so plainly', async () => {
    const runner = createNodeCommandRunner({ sandbox: () => undefined });
    const result = await runner.run('echo hi', { cwd: tmpdir(), timeoutMs: 10_000, maxOutputBytes: 1024 });
    assert.equal(result.exitCode, 0);
    assert.match(
      formatCommandResult(result),
      /--- sandbox ---\nThis command ran WITHOUT a sandbox \(the sandbox is switched off: agentCheckpoints\.sandbox or --no-sandbox\): it could read and change anything your user can\./,
    );
  });

  it('the system prompt promises read-only .git only where a sandbox holds it', () => {
    const prompt = (sandboxed: boolean): string =>
      buildSystemPrompt({ host: nodeHostFacts(process.env, sandboxed), folders: ['/w'], startedAt: 0, tools: ['run_command'] });
    const off = prompt(false);
    assert.match(off, /Commands: WITHOUT a sandbox \(the person switched the sandbox off\): a command can read and change anything/);
    assert.doesNotMatch(off, /\.git\/ and the run store are never writable/);
    assert.match(off, /the file tools never write \.git\/ or the run store/);
    if (detectSandbox().kind === 'bwrap') {
      assert.match(prompt(true), /Commands: in a sandbox \(bwrap\): the workspace is writable except \.git\//);
      const facts = (network: 'allowlist' | 'on' | 'off'): string => nodeHostFacts(process.env, true, undefined, network).sandbox ?? '';
      assert.match(
        facts('allowlist'),
        /is private; network: HTTP\(S\) only, via the proxy in HTTPS_PROXY, to hosts the person allowed \(no DNS/,
      );
      assert.match(facts('off'), /is private; no network$/);
      assert.match(facts('on'), /is private$/);
    }
  });
});
