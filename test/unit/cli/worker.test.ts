import { strict as assert } from 'node:assert';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PgCheckpointStore } from '../../../src/host/node/pg/pg-store';
import { batchModel, duplicatedEffects } from '../../support/batch-model';
import { bundleCli, startCli, type CliResult } from '../../support/cli-process';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';
import { testPostgres } from '../../support/pg-server';
import { tempDir } from '../runtime/harness';

const KEY = 'sk-ant-api03-worker-test-0123456789';

describe('workers on a PostgreSQL store', function () {
  this.timeout(120_000);
  let bundle: string;
  let scratch: string;
  let model: FakeAnthropic;

  before(async () => {
    scratch = tempDir('worker');
    bundle = await bundleCli(scratch);
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
    const log = readFileSync(join(ws, 'effects.log'), 'utf8');
    assert.deepEqual(duplicatedEffects(log), []);
    assert.equal(
      log.split('\n').filter(Boolean).length,
      8,
      `every job ran both of its commands:\n${log}\n${results.map((r) => r.stderr).join('\n')}`,
    );
    const claimed = results.flatMap((r) => [...r.stderr.matchAll(/worker: claimed run (\S+)/g)].map((m) => m[1]));
    assert.deepEqual([...claimed].sort(), [...ids].sort(), 'each run claimed by exactly one worker');
  });

  it('workers killed at random and restarted: every run completes, no command runs twice', async () => {
    const store = await (await testPostgres()).newDatabase();
    const ws = workspace();
    const ids = await queue(
      ws,
      store,
      Array.from({ length: 8 }, (_, i) => i + 1),
    );
    const live = new Set<ChildProcess>();
    const start = () => {
      const worker = cli(['worker', ...common(ws, store), '--exit-when-idle', '--quiet']);
      live.add(worker.proc);
      void worker.done.then(() => live.delete(worker.proc));
    };
    for (let i = 0; i < 3; i++) start();
    let kills = 0;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const left = [...(await statuses(store)).values()].filter((s) => s !== 'completed').length;
      if (left === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 300));
      const victim = [...live][Math.floor(Math.random() * live.size)];
      if (victim && kills < 8) {
        victim.kill('SIGKILL');
        kills++;
      }
      while (live.size < 3) start();
    }
    for (const proc of live) proc.kill('SIGKILL');
    const after = await statuses(store);
    for (const id of ids) assert.equal(after.get(id), 'completed', `run ${id} after ${kills} kills`);
    const log = readFileSync(join(ws, 'effects.log'), 'utf8');
    assert.deepEqual(duplicatedEffects(log), [], 'no non-idempotent command ran twice');
    assert.ok(kills > 0);
  });
});
