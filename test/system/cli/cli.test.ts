import { strict as assert } from 'node:assert';
import { SYSTEM_PROMPT_VERSION } from '../../../src/core/runtime/system-prompt';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createCliApprover } from '../../../src/host/cli/approver';
import { parseCli, UsageError } from '../../../src/host/cli/args';
import { defaultStoreDir } from '../../../src/host/node/state-dir';
import { startFakeAnthropic } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { tempDir } from '../../unit/runtime/harness';

const REPO = resolve(__dirname, '..', '..', '..');
const DEMO_WORKSPACE = join(REPO, 'test', 'demo', 'workspace');
const DEMO_REPLAY = join(REPO, 'test', 'demo', 'replay.jsonl');

describe('headless CLI', function () {
  this.timeout(30_000);
  let bundle: string;
  let scratch: string;

  before(async () => {
    scratch = tempDir('cli');
    bundle = await sharedCli();
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    startCli(bundle, args, { PATH: process.env['PATH'], HOME: scratch, ...env }).done;

  function demoCopy(): string {
    const dir = tempDir('demo');
    cpSync(DEMO_WORKSPACE, dir, { recursive: true });
    return dir;
  }

  it('bad usage exits 2 with one clear line', async () => {
    const noTask = await cli(['run', '--workspace', scratch]);
    assert.equal(noTask.code, 2);
    assert.equal(noTask.stderr, 'error: run needs --task TEXT\n');
    assert.equal((await cli(['run', '--workspace', scratch, '--task', 't', '--max-turns', 'x'])).code, 2);
    assert.equal((await cli(['fly'])).code, 2);
    const noKey = await cli(['run', '--workspace', scratch, '--task', 't', '--trust']);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /ANTHROPIC_API_KEY is not set/);
    assert.equal(
      (await cli(['run', '--workspace', join(scratch, 'nope'), '--task', 't', '--trust', '--provider', 'replay', '--replay', DEMO_REPLAY]))
        .code,
      2,
    );
  });

  it('runs the demo with the replay provider, then status --json shows steps and ledger', async () => {
    const ws = demoCopy();
    const store = join(scratch, 'store-demo');
    const run = await cli([
      'run',
      '--provider',
      'replay',
      '--replay',
      DEMO_REPLAY,
      '--workspace',
      ws,
      '--store',
      store,
      '--task',
      'Fix the greeting bug',
      '--yes',
      '--trust',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /: completed: /);
    const status = await cli(['status', '--store', store, '--json']);
    assert.equal(status.code, 0);
    const json = JSON.parse(status.stdout) as {
      status: string;
      steps: number;
      checkpoints: { label: string }[];
      ledger: { toolName: string; status: string }[];
      budget: { turns: number };
      run: { system?: string; prompt?: { version: number } };
    };
    assert.equal(json.status, 'completed');
    assert.ok(
      json.run.system?.includes('# Environment') && json.run.prompt?.version === SYSTEM_PROMPT_VERSION,
      'the run sent and recorded the system prompt',
    );
    assert.equal(json.steps, 6);
    assert.equal(json.budget.turns, 6);
    assert.equal(json.checkpoints[json.checkpoints.length - 1]!.label, 'run_end');
    assert.deepEqual(
      json.ledger.map((e) => `${e.toolName}:${e.status}`),
      [
        'list_dir:succeeded',
        'read_file:succeeded',
        'read_file:succeeded',
        'run_command:failed',
        'edit_file:succeeded',
        'run_command:succeeded',
      ],
    );
    const test = await new Promise<number | null>((done) =>
      spawn(process.execPath, ['test.js'], { cwd: ws, stdio: 'ignore' }).on('close', done),
    );
    assert.equal(test, 0, 'the demo tests pass after the run');
    const again = await cli([
      'resume',
      '--workspace',
      ws,
      '--store',
      store,
      '--run',
      JSON.parse(status.stdout).run.runId,
      '--provider',
      'replay',
      '--replay',
      DEMO_REPLAY,
      '--trust',
    ]);
    assert.equal(again.code, 0);
    assert.match(again.stderr, /already completed; nothing to resume/);
    rmSync(ws, { recursive: true, force: true });
  });

  it('without --yes and without a terminal an approval pauses (exit 3); resume --yes completes (default store)', async () => {
    const ws = demoCopy();
    const env = { HOME: scratch, XDG_STATE_HOME: join(scratch, 'state') };
    const paused = await cli(['run', '--provider', 'replay', '--replay', DEMO_REPLAY, '--workspace', ws, '--task', 'fix', '--trust'], env);
    assert.equal(paused.code, 3, paused.stderr);
    assert.match(paused.stderr, /paused: approval needed: run: node test\.js/);
    assert.ok(existsSync(defaultStoreDir(ws, env)));
    assert.ok(!defaultStoreDir(ws, env).startsWith(ws));
    const status = JSON.parse((await cli(['status', '--workspace', ws, '--json'], env)).stdout) as { status: string };
    assert.equal(status.status, 'paused');
    const resumed = await cli(['resume', '--workspace', ws, '--yes', '--trust', '--replay', DEMO_REPLAY], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(readdirSync(join(defaultStoreDir(ws, env), 'runs')).length, 1);
    rmSync(ws, { recursive: true, force: true });
  });

  it('talks to the Messages API through the SDK (--base-url, key from the environment); refusal exits 1', async () => {
    const fake = await startFakeAnthropic([{ content: [{ type: 'text', text: 'No.' }], stop_reason: 'refusal' }]);
    try {
      const ws = tempDir('ws');
      const result = await cli(
        [
          'run',
          '--workspace',
          ws,
          '--store',
          join(scratch, 's3'),
          '--task',
          'x',
          '--trust',
          '--base-url',
          fake.url,
          '--model',
          'claude-sonnet-4-6',
        ],
        { ANTHROPIC_API_KEY: 'sk-cli-test' },
      );
      assert.equal(result.code, 1, result.stderr);
      assert.equal(fake.requests[0]!.apiKeySeen, 'sk-cli-test');
      assert.ok(!result.stderr.includes('sk-cli-test'));
    } finally {
      await fake.close();
    }
  });

  it('--yes approves but never answers the uncertain question', async () => {
    const yes = createCliApprover({ yes: true, interactive: true });
    assert.equal(await yes.approve({ runId: 'r', callId: 'c', toolName: 'run_command', summary: 's', input: {} }), 'allow_once');
    assert.equal(await yes.askUncertain({ runId: 'r', callId: 'c', toolName: 'run_command', summary: 's' }), null);
    const nobody = createCliApprover({ yes: false, interactive: false });
    await assert.rejects(nobody.approve({ runId: 'r', callId: 'c', toolName: 'run_command', summary: 's', input: {} }), /--yes/);
  });

  it('parses options per command', () => {
    assert.deepEqual(parseCli(['status', '--store', 's', '--json']), {
      command: 'status',
      yes: false,
      trust: false,
      json: true,
      quiet: false,
      store: 's',
      sandbox: true,
      commandNetwork: 'allowlist',
      allowHosts: [],
      allowWorkspaceMcp: [],
      passEnv: [],
    });
    const sandboxed = parseCli([
      'run',
      '--workspace',
      'w',
      '--task',
      't',
      '--no-sandbox',
      '--command-network',
      'off',
      '--allow-workspace-mcp',
      'a',
      '--allow-workspace-mcp',
      'b',
    ]);
    assert.deepEqual([sandboxed.sandbox, sandboxed.commandNetwork, sandboxed.allowWorkspaceMcp], [false, 'off', ['a', 'b']]);
    assert.throws(() => parseCli(['run', '--workspace', 'w', '--task', 't', '--command-network', 'maybe']), /allowlist, on or off/);
    const hosts = parseCli(['run', '--workspace', 'w', '--task', 't', '--allow-host', 'a.example', '--allow-host', '[::1]:8080']);
    assert.deepEqual([hosts.commandNetwork, hosts.allowHosts], ['allowlist', ['a.example', '[::1]:8080']]);
    assert.throws(() => parseCli(['run', '--workspace', 'w', '--task', 't', '--allow-host', 'https://a.example/']), /--allow-host takes/);
    assert.throws(() => parseCli(['status', '--store', 's', '--no-sandbox']), /not an option of status/);
    assert.throws(() => parseCli(['status', '--store', 's', '--task', 'x']), UsageError);
    const run = ['run', '--workspace', 'w', '--task', 't'];
    assert.deepEqual(parseCli([...run, '--instruction-files', 'AGENTS.md, docs/AI.md']).instructionFiles, ['AGENTS.md', 'docs/AI.md']);
    assert.deepEqual(parseCli([...run, '--instruction-files', '']).instructionFiles, []);
    assert.throws(() => parseCli([...run, '--instruction-files', '../secret.md']), /--instruction-files/);
    assert.throws(() => parseCli(['run', '--workspace', 'w', '--task', 't', '--provider', 'replay']), /needs --replay FILE/);
  });
});
