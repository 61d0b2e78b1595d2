// npm run bench:pg: the PostgreSQL store on a throwaway server (fsync on, as a team's server runs):
// an append against a bare INSERT + COMMIT of the same bytes, the resume of a 10,000-step run in
// fresh processes (its writer killed mid-run, then closed), a person's Keep of one hunk on a run of
// that length (pg-keep.ts), and the throughput of 1 and 4 workers on 100 queued runs whose
// model answers after a fixed latency. Prints one JSON object.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import pg from 'pg';
import { systemClock } from '../../src/core/ports';
import { buildAgent } from '../../src/core/runtime/agent';
import { createCliApprover } from '../../src/host/cli/approver';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { NodeWorkspace } from '../../src/host/node/node-workspace';
import type { NewRecord, StoredRecord } from '../../src/core/store/records';
import { PgCheckpointStore } from '../../src/host/node/pg/pg-store';
import { nodeProcessIdentity } from '../../src/host/node/store-factory';
import { batchModel } from '../support/batch-model';
import { bundleCli } from '../support/cli-process';
import { startFakeAnthropic } from '../support/fake-anthropic/server';
import { startPostgres, type TestPostgres } from '../support/pg-server';
import { keepFigures, KEEPS } from './pg-keep';

const APPENDS = 400;
const RESUME_STEPS = Number(process.env.PG_BENCH_STEPS ?? 10_000);
const PROCESSES = 5;
const RUNS = Number(process.env.PG_BENCH_RUNS ?? 100);
/**
 * The fake model's latency (its stream's events spread over it): a real model's tool-use turn
 * takes seconds, so the workers' figure must not be one of a model that answers at once. The
 * mean of a call as the worker met it is printed beside it (model_call_ms).
 */
const MODEL_LATENCY_MS = Number(process.env.PG_BENCH_MODEL_MS ?? 600);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number) => Math.round(x * 100) / 100;
const progress = (what: string) => process.stderr.write(`[bench:pg] ${what}\n`);

function runInput(runId: string, folder = '/ws') {
  return {
    runId,
    task: 'bench',
    createdAt: Date.now(),
    workspaceFolders: [folder],
    git: { isRepo: false, dirtyPaths: [] },
    settings: { model: 'm', provider: 'p', maxTurns: 100_000, maxOutputTokensPerCall: 4096 },
  };
}

/** One realistic commit group: an assistant message of ~3 KB and the tool result after it. */
function group(n: number): NewRecord[] {
  const text = (what: string) => [{ type: 'text' as const, text: `${what} ${n} `.repeat(150) }];
  return [
    { type: 'message', index: 2 * n - 2, stepId: n, message: { role: 'assistant', content: text('answer') } },
    { type: 'message', index: 2 * n - 1, stepId: n, message: { role: 'user', content: text('result') } },
  ];
}

const lineBytes = (records: readonly StoredRecord[]) => records.map((r) => JSON.stringify(r)).join('\n');

/** An append of the store against a bare INSERT + COMMIT of the same bytes, alternated on the same server. */
async function appendFigures(server: TestPostgres): Promise<{ append: number; insert: number }> {
  const store = new PgCheckpointStore({ url: server.url, schema: await server.newSchema(), process: nodeProcessIdentity });
  const writer = await store.createRun(runInput('append'));
  const bare = new pg.Pool({ connectionString: server.url, max: 1 });
  bare.on('error', () => undefined);
  await bare.query('CREATE TABLE IF NOT EXISTS bare_journal (run_id text, seq integer, line text, PRIMARY KEY (run_id, seq))');
  const appends: number[] = [];
  const inserts: number[] = [];
  for (let n = 1; n <= APPENDS; n++) {
    let t = performance.now();
    const stored = await writer.append(group(n));
    appends.push(performance.now() - t);
    t = performance.now();
    const client = await bare.connect();
    await client.query('BEGIN');
    await client.query('INSERT INTO bare_journal VALUES ($1, $2, $3)', ['bare', n, lineBytes(stored)]);
    await client.query('COMMIT');
    client.release();
    inserts.push(performance.now() - t);
  }
  await writer.close();
  await store.dispose();
  await bare.end();
  return { append: median(appends.slice(20)), insert: median(inserts.slice(20)) };
}

/**
 * The child that builds the run and resumes it, bundled as the CLI ships:
 *   build <url> <schema>: RESUME_STEPS steps through the writer, then exits without closing it (as
 *     a killed writer: the rows after the last compaction's snapshot stay unsnapshotted);
 *   resume <url> <schema> <close>: one resume in a fresh process (the lease of the dead holder
 *     taken, the newest snapshot and the rows after it read); closes the writer only if asked.
 */
function benchChild(dir: string): string {
  const outfile = join(dir, 'pg-bench-child.js');
  const source = join(dir, 'pg-bench-child.ts');
  const src = (path: string) => JSON.stringify(join(__dirname, path));
  writeFileSync(
    source,
    `import { PgCheckpointStore } from ${src('../../src/host/node/pg/pg-store')};
import { nodeProcessIdentity } from ${src('../../src/host/node/store-factory')};
import { runInput, step } from ${src('./store-steps')};
void (async () => {
  const [mode, url, schema, close] = process.argv.slice(2);
  const started = performance.now();
  const store = new PgCheckpointStore({ url: url!, schema: schema!, process: nodeProcessIdentity });
  if (mode === 'build') {
    const writer = await store.createRun(runInput('big'));
    const history = { messages: 0, tokens: 0 };
    const sink = { commit: async (records: any) => (await writer.append(records)).length, blob: (b: Uint8Array) => store.putBlob(b) };
    for (let n = 1; n <= ${RESUME_STEPS}; n++) {
      await step(sink, n, history);
      if (n % 1000 === 0) process.stderr.write('[bench:pg] built ' + n + ' steps\\n');
    }
    process.exit(0);
  }
  const writer = await store.openWriter('big');
  const ms = performance.now() - started;
  if (writer.resumeState.stepId !== ${RESUME_STEPS}) throw new Error('resumed step ' + writer.resumeState.stepId);
  if (close === 'close') await writer.close();
  console.log(JSON.stringify({ ms }));
  process.exit(0);
})();
`,
  );
  buildSync({ entryPoints: [source], outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
  return outfile;
}

/** Resumes of the run in fresh processes: median ms. */
function resumes(child: string, url: string, schema: string, close: boolean): number {
  const times = Array.from({ length: PROCESSES }, (_, i) => {
    const last = close && i === PROCESSES - 1 ? 'close' : 'keep';
    const out = execFileSync(process.execPath, [child, 'resume', url, schema, last], { encoding: 'utf8' });
    return (JSON.parse(out.trim().split('\n').pop()!) as { ms: number }).ms;
  });
  return median(times);
}

/** The mean time from a before_model checkpoint to the assistant message after it: a model call as the worker met it. */
function modelCallMs(lines: readonly string[]): number {
  const records = lines.map(
    (line) => (JSON.parse(line) as { r: { type: string; at: number; label?: string; message?: { role: string } } }).r,
  );
  const calls: number[] = [];
  records.forEach((record, i) => {
    const before = records[i - 1];
    if (record.type === 'message' && record.message?.role === 'assistant' && before?.label === 'before_model')
      calls.push(record.at - before.at);
  });
  return calls.reduce((sum, ms) => sum + ms, 0) / Math.max(1, calls.length);
}

/** Queues RUNS runs, then lets `workers` worker processes take them; runs per minute and the mean model call. */
async function throughput(server: TestPostgres, cli: string, workers: number, dir: string): Promise<{ perMin: number; modelMs: number }> {
  const store = await server.newDatabase();
  const ws = mkdtempSync(join(dir, `ws-${workers}-`));
  const model = await startFakeAnthropic(batchModel({ commands: 2, latencyMs: MODEL_LATENCY_MS }));
  const env = { PATH: process.env['PATH'], HOME: dir, ANTHROPIC_API_KEY: 'sk-ant-api03-bench-0123456789' };
  const common = ['--workspace', ws, '--store', store, '--base-url', model.url, '--yes', '--trust', '--quiet'];
  // Queued by the runtime in this process, as `run --detach` does: the CLI's start-up is not what is measured here.
  const queue = new PgCheckpointStore({ url: store, process: nodeProcessIdentity });
  const { runtime } = buildAgent({
    store: queue,
    workspace: new NodeWorkspace({ roots: [ws] }),
    model: { name: 'unused', complete: () => Promise.reject(new Error('a queued run calls no model')) },
    approver: createCliApprover({ yes: true, interactive: false }),
    commands: createNodeCommandRunner(),
    clock: systemClock,
    log: { log: () => undefined },
  });
  for (let i = 0; i < RUNS; i++) await runtime.queue({ task: `job ${i}`, settings: runInput('').settings });
  await queue.dispose();
  const started = performance.now();
  const done = Array.from(
    { length: workers },
    () =>
      new Promise<void>((resolve, reject) => {
        const proc = spawn(process.execPath, [cli, 'worker', ...common, '--exit-when-idle'], { env, stdio: 'ignore' });
        proc.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited ${code}`))));
      }),
  );
  await Promise.all(done);
  await model.close();
  // From the first claim to the last run's end: the workers' own start-up is not part of a long-lived pool's throughput.
  const window = new pg.Pool({ connectionString: store, max: 1 });
  const { rows } = await window.query<{ first: string; last: string; done: string }>(
    `SELECT min(l.acquired_at) AS first, max(r.updated_at) AS last, count(*) FILTER (WHERE r.status = 'completed') AS done
       FROM ac_runs r JOIN ac_leases l USING (run_id)`,
  );
  const journal = await window.query<{ line: string }>('SELECT line FROM ac_journal ORDER BY run_id, seq');
  await window.end();
  if (Number(rows[0]!.done) !== RUNS) throw new Error(`${rows[0]!.done} of ${RUNS} runs completed with ${workers} worker(s)`);
  progress(`${workers} worker(s): ${((performance.now() - started) / 1000).toFixed(1)} s in all`);
  const perMin = RUNS / ((Number(rows[0]!.last) - Number(rows[0]!.first)) / 60_000);
  return { perMin, modelMs: modelCallMs(journal.rows.map((r) => r.line)) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pg-bench-'));
  const server = await startPostgres({ fsync: true });
  // The resume fixture is written without fsync (its writing is not measured; reading it is the same).
  const fixtures = await startPostgres();
  try {
    const append = await appendFigures(server);
    progress('appends');
    const schema = await fixtures.newSchema();
    const child = benchChild(dir);
    execFileSync(process.execPath, [child, 'build', fixtures.url, schema], { stdio: ['ignore', 'ignore', 'inherit'] });
    // Killed first (no resume closes the writer), then the last of them closes it: the closed case.
    const killed = resumes(child, fixtures.url, schema, true);
    const closed = resumes(child, fixtures.url, schema, false);
    progress('resume');
    const keep = await keepFigures(server, (url, schema) =>
      execFileSync(process.execPath, [child, 'build', url, schema], { stdio: ['ignore', 'ignore', 'inherit'] }),
    );
    progress('keeps');
    const cli = await bundleCli(dir);
    const one = await throughput(server, cli, 1, dir);
    progress('1 worker');
    const four = await throughput(server, cli, 4, dir);
    console.log(
      JSON.stringify({
        append_ms_p50: round(append.append),
        insert_commit_ms_p50: round(append.insert),
        append_ratio: round(append.append / append.insert),
        resume_ms_10k: round(closed),
        resume_killed_ms_10k: round(killed),
        resume_steps: RESUME_STEPS,
        keep_ms_p95: round(keep.p95),
        keep_journal_reads: keep.reads.whole + keep.reads.partial,
        keep_journal_reads_parts: keep.reads,
        keep_path: keep.path,
        keeps: KEEPS,
        workers_1_runs_per_min: round(one.perMin),
        workers_4_runs_per_min: round(four.perMin),
        scale_4_vs_1: round(four.perMin / one.perMin),
        runs: RUNS,
        model_latency_ms: MODEL_LATENCY_MS,
        model_call_ms: round(one.modelMs),
        model_call_ms_4: round(four.modelMs),
        loadavg: loadavg().map((x) => round(x)),
        targets: { keep_ms_p95: 20, keep_journal_reads: 0 },
      }),
    );
  } finally {
    await server.stop?.();
    await fixtures.stop?.();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
