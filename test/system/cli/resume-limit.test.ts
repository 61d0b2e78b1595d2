import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sharedCli, startCli } from '../../support/cli-process';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';
import { answer, reply, tempDir, toolUse } from '../../unit/runtime/harness';

// `resume` of a run paused at a limit, without a higher one: it would only pause again, so the CLI
// says which flag raises the limit, exits 3 and sends nothing; with the flag, the run goes on.

describe('CLI resume of a run paused at its limit', function () {
  this.timeout(30_000);
  let bundle: string;
  let scratch: string;
  let fake: FakeAnthropic | undefined;

  before(async () => {
    scratch = tempDir('cli-limit');
    bundle = await sharedCli();
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  const cli = (args: string[]) =>
    startCli(bundle, args, { PATH: process.env['PATH'], HOME: scratch, ANTHROPIC_API_KEY: 'sk-cli-limit' }).done;

  it('names --max-turns and exits 3 without a request; with --max-turns the run completes', async () => {
    fake = await startFakeAnthropic((_request, index) => (index === 0 ? reply([toolUse('t1', 'list_dir', {})]) : answer('done')));
    const ws = tempDir('ws');
    const common = ['--workspace', ws, '--store', join(scratch, 'store'), '--trust', '--base-url', fake.url];
    const run = await cli(['run', ...common, '--task', 'list', '--max-turns', '1', '--model', 'claude-sonnet-4-6']);
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /turn limit reached \(1 of 1 model calls\)/);
    assert.match(run.stderr, /to go on: `agent-checkpoints resume --run \S+ --max-turns N` \(N above 1\)/);

    const same = await cli(['resume', ...common]);
    assert.equal(same.code, 3, same.stderr);
    assert.match(same.stderr, /turn limit reached \(1 of 1 model calls\); resuming would stop there again, so nothing was sent/);
    assert.match(same.stderr, /raise the limit: `agent-checkpoints resume --run \S+ --max-turns N` \(N above 1\)/);
    assert.equal(fake.requests.length, 1, 'no request was sent');

    const raised = await cli(['resume', ...common, '--max-turns', '3']);
    assert.equal(raised.code, 0, raised.stderr);
    assert.equal(fake.requests.length, 2);
    rmSync(ws, { recursive: true, force: true });
  });

  it('names --max-cost-usd for a run paused at its cost limit', async () => {
    fake = await startFakeAnthropic((_request, index) =>
      index === 0 ? reply([toolUse('t1', 'list_dir', {})], 'tool_use', { input_tokens: 1000, output_tokens: 100 }) : answer('done'),
    );
    const ws = tempDir('ws');
    const common = ['--workspace', ws, '--store', join(scratch, 'store-cost'), '--trust', '--base-url', fake.url];
    const run = await cli(['run', ...common, '--task', 'list', '--max-cost-usd', '0.001', '--model', 'claude-sonnet-4-6']);
    assert.equal(run.code, 3, run.stderr);
    const same = await cli(['resume', ...common, '--max-turns', '40']);
    assert.equal(same.code, 3, same.stderr);
    assert.match(same.stderr, /--max-cost-usd X` \(X above 0\.001\)/);
    assert.equal(fake.requests.length, 1);
    rmSync(ws, { recursive: true, force: true });
  });
});
