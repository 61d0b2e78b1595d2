import { strict as assert } from 'node:assert';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandResult } from '../../../src/core/ports';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import { createNodeCommandRunner, type RunnerOptions } from '../../../src/host/node/command-runner';
import { detectSandbox } from '../../../src/host/node/sandbox/index';
import { startFakeAnthropic } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { tempDir } from '../../unit/runtime/harness';

/** The secrets a developer's shell typically holds; none may reach a command the model chose. */
const SECRETS: Record<string, string> = {
  GITHUB_TOKEN: 'ghp_envtestGITHUBvalue0123456789',
  AWS_SECRET_ACCESS_KEY: 'awsEnvTestSecretValue/0123456789',
  OPENAI_API_KEY: 'sk-envtest-OPENAI-value-0123456789',
  NPM_TOKEN: 'npm_envtestNPMvalue0123456789',
  PGPASSWORD: 'pg-envtest-password-value',
  DATABASE_URL: 'postgres://app:db-envtest-password@db.internal:5432/app',
};
const SECRET_VALUES = Object.values(SECRETS);
/** Distinctive parts of the values: a command's output must hold none of them. */
const SECRET_MARKS = ['envtestGITHUB', 'awsEnvTestSecret', 'envtest-OPENAI', 'envtestNPM', 'pg-envtest-password', 'db-envtest-password'];

const hasBwrap = detectSandbox().kind === 'bwrap';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

for (const sandboxed of [true, false])
  describe(`a command's environment is built, not inherited (${sandboxed ? 'in bubblewrap' : 'unsandboxed'})`, function () {
    this.timeout(30_000);
    let ws = '';

    before(function () {
      if (sandboxed && !hasBwrap) this.skip();
    });
    beforeEach(() => {
      ws = tempDir('cmd-env');
      mkdirSync(join(ws, 'home'));
    });
    afterEach(() => rmSync(ws, { recursive: true, force: true }));

    function runner(extra: NodeJS.ProcessEnv, passEnv: string[] = []): ReturnType<typeof createNodeCommandRunner> {
      const home = join(ws, 'home');
      const options: RunnerOptions = {
        env: { PATH: process.env['PATH'], HOME: home, LANG: 'C.UTF-8', ...SECRETS, ...extra },
        passEnv: () => passEnv,
        ...(sandboxed
          ? { sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, home, programDirs: [] }) }
          : {}),
      };
      return createNodeCommandRunner(options);
    }

    async function env(run: ReturnType<typeof createNodeCommandRunner>): Promise<CommandResult & { text: string }> {
      const result = await run.run('env', { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 64 * 1024 });
      assert.equal(result.exitCode, 0, formatCommandResult(result));
      return { ...result, text: formatCommandResult(result) };
    }

    it('the six secrets are not in it; the result names them once, never their values', async () => {
      const commands = runner({ HARMLESS_EXTRA: 'x' });
      const first = await env(commands);
      for (const name of Object.keys(SECRETS)) assert.doesNotMatch(first.stdout, new RegExp(`^${name}=`, 'm'), name);
      for (const mark of SECRET_MARKS) assert.ok(!first.text.includes(mark), `${mark} is in the result`);
      assert.match(first.stdout, /^PATH=/m);
      assert.match(first.stdout, /^LANG=C\.UTF-8$/m);
      assert.match(first.stdout, /^HOME=/m);
      const told = /--- environment ---\n[^\n]*\n- look like credentials: ([^\n]*)\n- not in the base set: ([^\n]*)/.exec(first.text);
      assert.ok(told, first.text);
      assert.deepEqual(told[1]!.split(', '), Object.keys(SECRETS).sort());
      assert.equal(told[2], 'HARMLESS_EXTRA');
      const second = await env(commands);
      assert.equal(second.environmentNote, undefined, 'said once');
      assert.doesNotMatch(second.text, /--- environment ---/);
    });

    it("a variable the person named passes, a credential named exactly too (never the agent's key); a pattern passes no credential-like name", async () => {
      const commands = runner(
        {
          ANTHROPIC_API_KEY: 'sk-ant-envtest-KEY',
          MYAPP_MODE: 'debug',
          MYAPP_TOKEN: 'myapp-envtest-token',
          MYAPP_DB_URL: 'mysql://u:myapp-envtest-pw@h/db',
          JAVA_OPTS: '-Xmx1g',
        },
        ['JAVA_OPTS', 'MYAPP_*', 'NPM_TOKEN', '*SECRET*', 'ANTHROPIC_API_KEY'],
      );
      const result = await env(commands);
      assert.match(result.stdout, /^JAVA_OPTS=-Xmx1g$/m);
      assert.match(result.stdout, /^MYAPP_MODE=debug$/m);
      assert.match(result.stdout, new RegExp(`^NPM_TOKEN=${SECRETS['NPM_TOKEN']}$`, 'm'), 'named exactly, it passes');
      assert.doesNotMatch(result.stdout, /^MYAPP_TOKEN=/m);
      assert.doesNotMatch(result.stdout, /^MYAPP_DB_URL=/m);
      assert.doesNotMatch(result.stdout, /^AWS_SECRET_ACCESS_KEY=/m, 'a pattern that matches a credential passes nothing');
      assert.ok(!result.text.includes('myapp-envtest') && !result.text.includes('sk-ant-envtest'), result.text);
      assert.match(result.text, /look like credentials: .*MYAPP_DB_URL, MYAPP_TOKEN/);
    });
  });

describe('headless CLI: secrets of its environment out of commands, the store and the model', function () {
  this.timeout(60_000);
  let scratch = '';
  let bundle = '';

  before(async () => {
    scratch = tempDir('cli-env');
    bundle = await sharedCli();
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  for (const sandbox of [true, false])
    it(`env in a command shows no secret; --pass-env passes a name; the withheld names reach the model, no value reaches the store (sandbox ${sandbox ? 'on' : 'off'})`, async function () {
      if (sandbox && !hasBwrap) this.skip();
      const ws = tempDir('ws-env');
      const store = join(scratch, `store-${sandbox}`);
      const fake = await startFakeAnthropic([
        { content: [{ type: 'tool_use', id: 'toolu_env', name: 'run_command', input: { command: 'env' } }], stop_reason: 'tool_use' },
        { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' },
      ]);
      try {
        const args = ['run', '--workspace', ws, '--store', store, '--task', 'x', '--trust', '--yes', '--base-url', fake.url];
        const result = await startCli(
          bundle,
          [...args, '--pass-env', 'BUILD_FLAVOR', '--pass-env', 'MYAPP_*', ...(sandbox ? [] : ['--no-sandbox'])],
          {
            PATH: process.env['PATH'],
            HOME: scratch,
            XDG_CONFIG_HOME: join(scratch, 'config'),
            ANTHROPIC_API_KEY: 'sk-ant-api03-cli-env-test-0123456789',
            BUILD_FLAVOR: 'nightly',
            MYAPP_API_KEY: 'myapp-envtest-key',
            ...SECRETS,
          },
        ).done;
        assert.equal(result.code, 0, result.stderr);
        const toolResult = JSON.stringify(fake.requests[1]!.body);
        assert.match(toolResult, /BUILD_FLAVOR=nightly/);
        for (const mark of [...SECRET_MARKS, 'myapp-envtest-key']) assert.ok(!toolResult.includes(mark), `${mark} reached the model`);
        assert.match(toolResult, /--- environment ---/);
        for (const name of [...Object.keys(SECRETS), 'MYAPP_API_KEY']) assert.ok(toolResult.includes(name), `${name} is not named`);
        for (const file of filesUnder(store)) {
          const text = readFileSync(file, 'utf8');
          for (const value of [...SECRET_VALUES, 'myapp-envtest-key']) assert.ok(!text.includes(value), `${file} holds a secret`);
        }
      } finally {
        await fake.close();
        rmSync(ws, { recursive: true, force: true });
      }
    });
});
