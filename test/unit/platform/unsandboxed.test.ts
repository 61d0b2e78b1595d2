import { strict as assert } from 'node:assert';
import { buildSystemPrompt } from '../../../src/core/runtime/system-prompt';
import { nodeHostFacts } from '../../../src/host/node/host-facts';
import { detectSandbox } from '../../../src/host/node/sandbox';
import { answer, byTurn, harness, SETTINGS } from '../runtime/harness';

describe('commands without a sandbox are said to be so', () => {
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

describe('a run whose commands have no sandbox says so at its start', () => {
  it('sandbox off or none on this machine: a warning note (the Timeline header, the CLI, the log); sandboxed: none', async () => {
    for (const sandbox of ['off', 'unavailable'] as const) {
      const h = await harness({ script: byTurn([answer('done')]) });
      const done = await h.runtime().start({ task: 't', settings: { ...SETTINGS, commands: { sandbox, network: 'on' } } });
      const notes = (await h.records(done.runId)).filter((r) => r.type === 'note' && r.kind === 'warning');
      assert.equal(notes.length, 1, sandbox);
      assert.match(
        JSON.stringify(notes[0]),
        /commands in this run run WITHOUT a sandbox \((the sandbox is switched off|this machine has no sandbox for them)\)/,
      );
      await h.close();
    }
    const h = await harness({ script: byTurn([answer('done')]) });
    const sandboxed = await h.runtime().start({ task: 't', settings: { ...SETTINGS, commands: { sandbox: 'bwrap', network: 'on' } } });
    assert.equal((await h.records(sandboxed.runId)).filter((r) => r.type === 'note').length, 0);
    await h.close();
  });
});
