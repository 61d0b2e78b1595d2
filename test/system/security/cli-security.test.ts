import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startFakeAnthropic } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { tempDir } from '../../unit/runtime/harness';

const REPO = resolve(__dirname, '..', '..', '..');
const DEMO_WORKSPACE = join(REPO, 'test', 'demo', 'workspace');
const DEMO_REPLAY = join(REPO, 'test', 'demo', 'replay.jsonl');
const KEY = 'sk-ant-api03-cli-security-0123456789SECRET';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('headless CLI: trust gate and the key out of reach', function () {
  this.timeout(60_000);
  let bundle: string;
  let scratch: string;

  before(async () => {
    scratch = tempDir('cli-sec');
    bundle = await sharedCli();
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    startCli(bundle, args, { PATH: process.env['PATH'], HOME: scratch, XDG_CONFIG_HOME: join(scratch, 'config'), ...env }).done;

  /** The demo workspace as a git repository whose config names an fsmonitor command that leaves a marker. */
  function hostileRepo(): { ws: string; marker: string } {
    const ws = tempDir('hostile');
    cpSync(DEMO_WORKSPACE, ws, { recursive: true });
    const marker = join(tempDir('marker'), 'fsmonitor-ran');
    const git = (...args: string[]) => execFileSync('git', ['-C', ws, ...args], { stdio: 'ignore' });
    git('init', '-q');
    writeFileSync(join(ws, '.git', 'monitor.sh'), `#!/bin/sh\ntouch '${marker}'\n`);
    chmodSync(join(ws, '.git', 'monitor.sh'), 0o755);
    git('config', 'core.fsmonitor', join(ws, '.git', 'monitor.sh'));
    return { ws, marker };
  }

  it('refuses an untrusted workspace before git or the model runs; --trust or the user trust list let it run', async () => {
    const { ws, marker } = hostileRepo();
    const store = join(scratch, 'store-untrusted');
    const args = ['run', '--provider', 'replay', '--replay', DEMO_REPLAY, '--workspace', ws, '--store', store, '--task', 'fix', '--yes'];
    const refused = await cli(args);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /is not trusted: .*--trust.*config\/agent-checkpoints\/trusted-workspaces/);
    assert.equal(existsSync(store), false, 'nothing was recorded');
    const listed = join(scratch, 'config', 'agent-checkpoints');
    mkdirSync(listed, { recursive: true });
    writeFileSync(join(listed, 'trusted-workspaces'), `# my folders\n${ws}\n`);
    const trusted = await cli(args);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(existsSync(marker), false, 'git ran the repository fsmonitor command');
    rmSync(join(listed, 'trusted-workspaces'));
    assert.equal((await cli([...args, '--trust'])).code, 0);
    assert.equal(existsSync(marker), false);
    rmSync(ws, { recursive: true, force: true });
  });

  it('kill -9 of the launcher ends the re-executed CLI too', async () => {
    const ws = tempDir('ws-kill');
    const pidFile = join(ws, 'cli.pid');
    const fake = await startFakeAnthropic([
      {
        content: [{ type: 'tool_use', id: 'toolu_wait', name: 'run_command', input: { command: `echo $PPID > cli.pid; sleep 30` } }],
        stop_reason: 'tool_use',
      },
    ]);
    try {
      const launcher = spawn(
        process.execPath,
        [
          bundle,
          'run',
          '--workspace',
          ws,
          '--store',
          join(scratch, 'store-kill'),
          '--task',
          'x',
          '--trust',
          '--yes',
          '--base-url',
          fake.url,
          // $PPID must be the CLI's pid: in the sandbox it would be the namespace's own init.
          '--no-sandbox',
        ],
        { env: { PATH: process.env['PATH'], HOME: scratch, ANTHROPIC_API_KEY: KEY }, stdio: 'ignore' },
      );
      const until = Date.now() + 20_000;
      while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
        assert.ok(Date.now() < until, 'the command never started');
        await new Promise((r) => setTimeout(r, 50));
      }
      const cliPid = Number(readFileSync(pidFile, 'utf8').trim());
      assert.notEqual(cliPid, launcher.pid, 'the command runs under the re-executed CLI, not the launcher');
      launcher.kill('SIGKILL');
      const alive = (): boolean => {
        try {
          process.kill(cliPid, 0);
          return true;
        } catch {
          return false;
        }
      };
      const deadline = Date.now() + 5_000;
      while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(alive(), false, 'the re-executed CLI outlived its launcher');
    } finally {
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('started with the key in its environment, the CLI re-executes without it: a command cannot read it from its parent', async () => {
    const ws = tempDir('ws-key');
    const store = join(scratch, 'store-key');
    const fake = await startFakeAnthropic([
      {
        content: [{ type: 'tool_use', id: 'toolu_env', name: 'run_command', input: { command: "tr '\\0' '\\n' < /proc/$PPID/environ" } }],
        stop_reason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' },
    ]);
    try {
      const result = await cli(
        [
          'run',
          '--workspace',
          ws,
          '--store',
          store,
          '--task',
          'x',
          '--trust',
          '--yes',
          '--base-url',
          fake.url,
          '--model',
          'claude-sonnet-4-6',
        ],
        { ANTHROPIC_API_KEY: KEY },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(fake.requests.length, 2);
      assert.ok(
        fake.requests.every((r) => r.apiKeySeen === KEY),
        'the key still reached the Messages API',
      );
      const toolResult = JSON.stringify(fake.requests[1]!.body);
      assert.match(toolResult, /PATH=/, 'the command did read its parent process environment');
      assert.ok(!toolResult.includes(KEY), 'the key was in the CLI process environment');
      assert.ok(!toolResult.includes('ANTHROPIC_API_KEY'), 'not even the variable name is there');
      for (const file of filesUnder(store)) assert.ok(!readFileSync(file).includes(KEY), `${file} holds the key`);
      assert.ok(!result.stderr.includes(KEY) && !result.stdout.includes(KEY));
    } finally {
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });

  for (const sandbox of [true, false])
    it(`no process a command can see holds the key in its environment: every /proc/*/environ scanned (sandbox ${sandbox ? 'on' : 'off'})`, async () => {
      const ws = tempDir('ws-scan');
      // The command names only a fragment's neighbour, so its own command line cannot match.
      const scan =
        "n=0; hits=0; for f in /proc/[0-9]*/environ; do if tr '\\0' '\\n' < $f > /dev/null 2>&1; then n=$((n+1)); if tr '\\0' '\\n' < $f | grep -q \"$(printf 'api03-cli-secur')ity-0123\"; then hits=$((hits+1)); echo \"holder: $f $(tr '\\0' ' ' < ${f%environ}cmdline)\"; fi; fi; done; echo \"scanned=$n hits=$hits\"";
      const fake = await startFakeAnthropic([
        { content: [{ type: 'tool_use', id: 'toolu_scan', name: 'run_command', input: { command: scan } }], stop_reason: 'tool_use' },
        { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' },
      ]);
      try {
        const args = ['run', '--workspace', ws, '--store', join(scratch, `store-scan-${sandbox}`), '--task', 'x', '--trust', '--yes'];
        const result = await cli([...args, '--base-url', fake.url, ...(sandbox ? [] : ['--no-sandbox'])], { ANTHROPIC_API_KEY: KEY });
        assert.equal(result.code, 0, result.stderr);
        const toolResult = JSON.stringify(fake.requests[1]!.body);
        const scanned = /scanned=(\d+) hits=(\d+)/.exec(toolResult);
        assert.ok(scanned, toolResult);
        assert.ok(Number(scanned[1]) >= (sandbox ? 1 : 3), `the scan read too few environments: ${toolResult}`);
        assert.equal(scanned[2], '0', toolResult);
        if (!sandbox) assert.match(toolResult, /exit code 0/);
      } finally {
        await fake.close();
        rmSync(ws, { recursive: true, force: true });
      }
    });
});
