import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PgCheckpointStore } from '../../../src/host/node/pg/pg-store';
import { batchModel, duplicatedEffects, effectsLog } from '../../support/batch-model';
import { sharedCli, startCli, type CliResult } from '../../support/cli-process';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';
import { pgKillHarness, type KillHarnessResult, type WorkerNetwork } from '../../support/pg-kill-harness';
import { netnsUnavailable, startNetnsNetwork } from '../../support/pg-netns';
import { testPostgres } from '../../support/pg-server';
import { tempDir } from '../../unit/runtime/harness';

const KEY = 'sk-ant-api03-worker-test-0123456789';

describe('workers on a PostgreSQL store', function () {
  this.timeout(120_000);
  let bundle: string;
  let scratch: string;
  let model: FakeAnthropic;

  before(async () => {
    scratch = tempDir('worker');
    bundle = await sharedCli();
    model = await startFakeAnthropic(batchModel({ commands: 2 }));
  });
  after(async () => {
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const env = () => ({ PATH: process.env['PATH'], HOME: scratch, ANTHROPIC_API_KEY: KEY });
  const common = (ws: string, store: string) => ['--workspace', ws, '--store', store, '--base-url', model.url, '--yes', '--trust'];
  const cli = (args: string[]) => startCli(bundle, args, env());

  async function queue(ws: string, store: string, jobs: number[]): Promise<string[]> {
    const ids: string[] = [];
    for (const job of jobs) {
      const queued = await cli(['run', ...common(ws, store), '--task', `job ${job}`, '--detach']).done;
      assert.equal(queued.code, 0, queued.stderr);
      ids.push(queued.stdout.trim());
    }
    return ids;
  }

  async function statuses(store: string): Promise<Map<string, string>> {
    const pg = new PgCheckpointStore({ url: store });
    try {
      return new Map((await pg.listRuns()).map((r) => [r.runId, r.status]));
    } finally {
      await pg.dispose();
    }
  }

  async function ledgersOf(store: string, ids: readonly string[]): Promise<string> {
    const pg = new PgCheckpointStore({ url: store });
    try {
      const lines: string[] = [];
      for (const id of ids) {
        for (const entry of (await pg.readRun(id)).ledger) {
          const result = entry.resultRef ? new TextDecoder().decode(await pg.getBlob(entry.resultRef)).slice(0, 300) : '';
          lines.push(`${id} ${entry.callId} ${entry.status} ${entry.error ?? ''} ${result}`);
        }
      }
      return lines.join('\n');
    } finally {
      await pg.dispose();
    }
  }

  function workspace(): string {
    const ws = tempDir('worker-ws');
    writeFileSync(join(ws, 'README.md'), '# a batch\n');
    return ws;
  }

  it('run --detach queues; workers take every queued run of their workspace once, and none of another', async () => {
    const store = await (await testPostgres()).newDatabase();
    const ws = workspace();
    const other = workspace();
    const ids = await queue(ws, store, [1, 2, 3, 4]);
    const [foreign] = await queue(other, store, [99]);
    assert.ok(
      [...(await statuses(store)).values()].every((s) => s === 'running'),
      'queued: nobody holds them yet',
    );
    const workers = [0, 1].map(() => cli(['worker', ...common(ws, store), '--concurrency', '2', '--exit-when-idle']).done);
    const results: CliResult[] = await Promise.all(workers);
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const after = await statuses(store);
    for (const id of ids) assert.equal(after.get(id), 'completed', `run ${id}`);
    assert.equal(after.get(foreign!), 'running', 'a run of another workspace is left for a worker of that workspace');
    const log = effectsLog(ws);
    assert.deepEqual(duplicatedEffects(log), []);
    const effects = log.split('\n').filter(Boolean).length;
    // When one is missing, what each run's ledger says of its calls (a command that failed says why).
    const calls = effects === 8 ? '' : await ledgersOf(store, ids);
    assert.equal(effects, 8, `every job ran both of its commands:\n${log}\n${results.map((r) => r.stderr).join('\n')}\n${calls}`);
    const claimed = results.flatMap((r) => [...r.stderr.matchAll(/worker: claimed run (\S+)/g)].map((m) => m[1]));
    assert.deepEqual([...claimed].sort(), [...ids].sort(), 'each run claimed by exactly one worker');
  });

  // The kill harness (pg-kill-harness.ts) at a test's size; PG_KILL_WORKERS / PG_KILL_RUNS for
  // more (npm run bench:pg-kill runs 4 x 100).
  const size = { workers: Number(process.env['PG_KILL_WORKERS'] ?? 4), runs: Number(process.env['PG_KILL_RUNS'] ?? 12) };
  const harness = (network?: WorkerNetwork) =>
    pgKillHarness({
      ...size,
      maxKills: size.runs,
      killGapMs: [200, 600],
      deadlineMs: 60_000 + size.runs * 8_000,
      ...(network ? { network } : {}),
      bundle,
    });
  const holds = (result: KillHarnessResult) => {
    assert.deepEqual(result.problems, [], JSON.stringify(result));
    assert.equal(result.completed, size.runs);
    assert.equal(result.duplicated_effects, 0);
    assert.equal(result.lost_records, 0);
    assert.ok(result.kills > 0, 'workers were killed');
  };

  it(`${size.workers} workers killed at random (SIGKILL) and restarted on ${size.runs} runs: every run completes, no command runs twice, no acknowledged record is lost`, async function () {
    this.timeout(120_000 + size.runs * 10_000);
    holds(await harness());
  });

  describe('workers in network namespaces of their own, reaching PostgreSQL over veth pairs', function () {
    const unavailable = netnsUnavailable();
    it(
      unavailable ? `skipped: ${unavailable}` : 'killed at random and restarted: the same guarantees across the network',
      async function () {
        if (unavailable) {
          console.log(`      workers in network namespaces skipped: ${unavailable}`);
          this.skip();
        }
        this.timeout(120_000 + size.runs * 10_000);
        const network = await startNetnsNetwork(size.workers);
        try {
          holds(await harness(network));
        } finally {
          await network.close();
        }
      },
    );
  });
});
