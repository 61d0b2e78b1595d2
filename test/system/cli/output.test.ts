import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliEvent } from '../../../src/host/cli/output';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { tempDir } from '../../unit/runtime/harness';

// What `run` prints as the run goes: the model's words as they stream and one line per call
// (text), one JSON event per line (--json), or only the outcome (--quiet).

/** Turn 1 streams its words slowly, then asks to list the folder; turn 2 answers. */
function twoTurns(delayMs: number): Promise<FakeAnthropic> {
  return startFakeAnthropic([
    {
      content: [
        { type: 'text', text: 'Looking at the files first.' },
        { type: 'tool_use', id: 'toolu_ls', name: 'list_dir', input: { path: '.' } },
      ],
      stop_reason: 'tool_use',
      eventDelayMs: delayMs,
    },
    { content: [{ type: 'text', text: 'All done.' }], stop_reason: 'end_turn' },
  ]);
}

describe('headless CLI: output while a run goes', function () {
  this.timeout(30_000);
  let bundle: string;
  let scratch: string;

  before(async () => {
    scratch = tempDir('cli-output');
    bundle = await sharedCli();
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  function runArgs(fake: FakeAnthropic, name: string, extra: string[]): string[] {
    const ws = join(scratch, `ws-${name}`);
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    const store = join(scratch, `store-${name}`);
    return ['run', '--workspace', ws, '--store', store, '--base-url', fake.url, '--task', 'Look around', '--yes', '--trust', ...extra];
  }

  function start(args: string[]) {
    return startCli(bundle, args, { PATH: process.env['PATH'], HOME: scratch, ANTHROPIC_API_KEY: 'sk-output-test' });
  }

  it('text: the words appear as they stream, before the call line; each call is one line', async () => {
    const fake = await twoTurns(150);
    try {
      const cli = start(runArgs(fake, 'text', []));
      const chunks: Array<{ at: number; text: string }> = [];
      cli.proc.stdout!.on('data', (d: Buffer) => chunks.push({ at: Date.now(), text: d.toString() }));
      const result = await cli.done;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'Looking at the files first.\n  [ok] list .\nAll done.\n');
      const firstWords = chunks.find((c) => c.text.includes('Looking'))!;
      const callLine = chunks.find((c) => c.text.includes('[ok]'))!;
      assert.ok(
        !firstWords.text.includes('first.'),
        `the first words arrive alone, not with the whole text: ${JSON.stringify(firstWords.text)}`,
      );
      assert.ok(callLine.at - firstWords.at >= 300, `streamed ${callLine.at - firstWords.at} ms before the call finished`);
      assert.match(result.stderr, /^store: /m);
      assert.match(result.stderr, /: completed: All done\.$/m);
    } finally {
      await fake.close();
    }
  });

  it('--json: one parseable event per line, calls with their summary and every status, the outcome last', async () => {
    const fake = await twoTurns(0);
    try {
      const result = await start(runArgs(fake, 'json', ['--json'])).done;
      assert.equal(result.code, 0, result.stderr);
      const events = result.stdout
        .trimEnd()
        .split('\n')
        .map((l) => CliEvent.parse(JSON.parse(l)));
      const text = events.filter((e) => e.type === 'text').map((e) => (e.type === 'text' ? e.text : ''));
      assert.equal(text.join(''), 'Looking at the files first.All done.');
      const calls = events.flatMap((e) => (e.type === 'call' ? [`${e.status}:${e.summary}`] : []));
      assert.deepEqual(calls, ['planned:list .', 'started:list .', 'succeeded:list .']);
      assert.ok(events.some((e) => e.type === 'checkpoint' && e.label === 'run_end'));
      const last = events.at(-1)!;
      assert.equal(last.type, 'outcome');
      assert.equal(last.type === 'outcome' && last.status, 'completed');
    } finally {
      await fake.close();
    }
  });

  it('a refused request says once that resuming sends the same request', async () => {
    const fake = await startFakeAnthropic([{ fault: 'status', status: 400, message: 'messages.1: a rule' }]);
    try {
      const result = await start(runArgs(fake, 'refused', [])).done;
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, /The request was refused: .*messages\.1: a rule/);
      assert.equal(result.stderr.split('resuming sends the same request').length - 1, 1, result.stderr);
      assert.match(result.stderr, /please report this with the run and its log/);
    } finally {
      await fake.close();
    }
  });

  it('a 429 with retry-after says the wait when it starts: "rate limited, retrying in 1 s", then the run completes', async () => {
    const fake = await startFakeAnthropic([
      { fault: 'status', status: 429, retryAfterSeconds: 1 },
      { content: [{ type: 'text', text: 'All done.' }], stop_reason: 'end_turn' },
    ]);
    try {
      const result = await start(runArgs(fake, 'rate-limited', [])).done;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr.split('rate limited, retrying in 1 s').length - 1, 1, result.stderr);
      assert.doesNotMatch(result.stderr, /HTTP 429/);
    } finally {
      await fake.close();
    }
  });

  it('--quiet prints only the outcome; --json with --quiet is refused', async () => {
    const fake = await twoTurns(0);
    try {
      const result = await start(runArgs(fake, 'quiet', ['--quiet'])).done;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /^run [\w-]+: completed: All done\.\n$/);
      const both = await start(runArgs(fake, 'both', ['--quiet', '--json'])).done;
      assert.equal(both.code, 2);
      assert.equal(both.stderr, 'error: --json and --quiet cannot be used together\n');
      assert.equal(fake.requests.length, 2, 'the refused invocation asked the model nothing');
    } finally {
      await fake.close();
    }
  });
});
