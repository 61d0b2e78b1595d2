import { strict as assert } from 'node:assert';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCli, UsageError } from '../../../src/host/cli/args';
import { openFileStore } from '../../../src/host/node/store-factory';
import { startFakeAnthropic } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { assertEveryRequestValid } from '../../support/valid-requests';
import { answer, byTurn, reply, tempDir, toolUse } from '../../unit/runtime/harness';

describe('headless CLI: fork and continue', function () {
  this.timeout(60_000);
  let bundle: string;
  let scratch: string;

  before(async () => {
    scratch = tempDir('cli-fork');
    bundle = await sharedCli();
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  const cli = (args: string[]) =>
    startCli(bundle, args, { PATH: process.env['PATH'], HOME: scratch, ANTHROPIC_API_KEY: 'sk-cli-test' }).done;

  it('parses fork and continue, and refuses them without what they need', () => {
    assert.deepEqual(parseCli(['fork', '--workspace', '/w', '--run', 'r', '--step', '2', '--files', 'restore']), {
      command: 'fork',
      workspace: '/w',
      run: 'r',
      step: 2,
      files: 'restore',
      yes: false,
      trust: false,
      json: false,
      quiet: false,
      sandbox: true,
      commandNetwork: 'allowlist',
      allowHosts: [],
      allowWorkspaceMcp: [],
      passEnv: [],
    });
    assert.equal(parseCli(['continue', '--workspace', '/w', '--run', 'r', '--task', 'more', '--max-turns', '9']).maxTurns, 9);
    assert.throws(() => parseCli(['fork', '--workspace', '/w', '--run', 'r']), UsageError);
    assert.throws(() => parseCli(['fork', '--workspace', '/w', '--run', 'r', '--step', '0']), UsageError);
    assert.throws(() => parseCli(['fork', '--workspace', '/w', '--run', 'r', '--step', '1', '--files', 'all']), UsageError);
    assert.throws(() => parseCli(['continue', '--workspace', '/w', '--run', 'r']), UsageError);
    assert.throws(() => parseCli(['fork', '--workspace', '/w', '--run', 'r', '--step', '1', '--task', 't']), UsageError);
  });

  it('forks a completed run at step 2 with the files restored, continues the fork with a raised limit; the parent stays', async () => {
    const script = byTurn([
      reply([toolUse('t1', 'read_file', { path: 'a.txt' })]),
      reply([toolUse('t2', 'edit_file', { path: 'a.txt', old_string: 'one', new_string: 'two' })]),
      answer('done'),
      answer('done again'),
    ]);
    const fake = await startFakeAnthropic(script);
    try {
      const ws = tempDir('ws');
      writeFileSync(join(ws, 'a.txt'), 'one\n');
      const store = join(scratch, 'store');
      const common = ['--workspace', ws, '--store', store, '--trust'];
      const model = ['--base-url', fake.url];
      const run = await cli(['run', ...common, ...model, '--task', 'edit a.txt', '--model', 'claude-sonnet-4-6', '--quiet']);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'two\n');
      const [parent] = await openFileStore(store).listRuns();
      const fork = await cli(['fork', ...common, '--run', parent!.runId, '--step', '2', '--files', 'restore', '--json']);
      assert.equal(fork.code, 0, fork.stderr);
      const forked = JSON.parse(fork.stdout) as { runId: string; parent: unknown; written: string[] };
      assert.deepEqual(forked.parent, { runId: parent!.runId, step: 2 });
      assert.deepEqual(forked.written, ['a.txt']);
      assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'one\n');
      const more = await cli([
        'continue',
        ...common,
        ...model,
        '--run',
        forked.runId,
        '--task',
        'keep it short',
        '--max-turns',
        '60',
        '--quiet',
      ]);
      assert.equal(more.code, 0, more.stderr);
      assertEveryRequestValid(fake);
      const state = await openFileStore(store).readRun(forked.runId);
      assert.equal(state.budget.maxTurns, 60, 'the raise the person chose is recorded');
      assert.equal((await openFileStore(store).readRun(parent!.runId)).status, 'completed');
      const help = await cli(['--help']);
      assert.match(help.stdout, /agent-checkpoints fork --workspace DIR/);
      assert.match(help.stdout, /agent-checkpoints continue --workspace DIR/);
    } finally {
      await fake.close();
    }
  });
});
