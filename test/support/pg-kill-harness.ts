import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashContent } from '../../src/core/patches/hash';
import { PgCheckpointStore } from '../../src/host/node/pg/pg-store';
import { batchModel, duplicatedEffects, effectsLog, strayFiles } from './batch-model';
import { bundleCli, startCli } from './cli-process';
import { startFakeAnthropic } from './fake-anthropic/server';
import { testPostgres, type TestPostgres } from './pg-server';

// The kill harness of the workers on PostgreSQL (worker.test.ts at a test's size, bench:pg-kill
// at 4 x 100): a batch of `run --detach` runs, `workers` CLI workers killed at random with
// SIGKILL and restarted, until every run completes. It counts what must stay 0:
// - duplicated_effects: a non-idempotent command (a line of the effects: batch-model.ts) that ran twice;
// - lost_records: a journal row an observer once read (so committed: acknowledged) that later
//   is gone or different, plus a command that ran with no ledger record of its call (the
//   write-ahead record was acknowledged before the command ran, so it was lost).

export interface KillHarnessOptions {
  readonly workers: number;
  readonly runs: number;
  /** Kills at most this many times; one every `killGapMs` (a random time in the range). */
  readonly maxKills: number;
  readonly killGapMs: readonly [number, number];
  /** Gives up (runs left not completed) after this long. */
  readonly deadlineMs: number;
  /** Where the workers run and how they reach PG and the model; by default plain child processes (pg-netns.ts: network namespaces). */
  readonly network?: WorkerNetwork;
  readonly progress?: (line: string) => void;
  /** The bundled CLI to start (the system layer's shared one); by default bundled here. */
  readonly bundle?: string;
}

export interface WorkerNetwork {
  /** The server the batch is stored on (one the workers can reach). */
  readonly server: TestPostgres;
  /** The program and arguments that start worker slot `slot` running `node argv...`. */
  command(slot: number, node: readonly string[]): { program: string; args: string[] };
  /** A host address (PG's, the model's) as worker slot `slot` reaches it. */
  reach(slot: number, url: string): Promise<string>;
}

export interface KillHarnessResult {
  readonly workers: number;
  readonly runs: number;
  readonly kills: number;
  /** Kills of a worker that held a run's lease at that moment. */
  readonly kills_mid_run: number;
  readonly duplicated_effects: number;
  readonly lost_records: number;
  readonly completed: number;
  readonly seconds: number;
  /** What went wrong, run by run (empty when every figure above is as it must be). */
  readonly problems: readonly string[];
}

const KEY = 'sk-ant-api03-kill-harness-0123456789';
const COMMANDS = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every journal row the observer has read, as run:seq -> md5 of its line. */
type Seen = Map<string, string>;

async function observe(store: PgCheckpointStore, seen: Seen, problems: string[]): Promise<Map<string, string>> {
  const rows = await store.query<{ key: string; sum: string }>("SELECT run_id || ':' || seq AS key, md5(line) AS sum FROM ac_journal");
  const now = new Map(rows.rows.map((r) => [r.key, r.sum]));
  for (const [key, sum] of seen) {
    if (now.get(key) !== sum) problems.push(`journal row ${key} was read once and is now ${now.has(key) ? 'different' : 'gone'}`);
  }
  for (const [key, sum] of now) seen.set(key, sum);
  return new Map((await store.listRuns()).map((r) => [r.runId, r.status]));
}

/** Effects that ran with no ledger record of their call in their run's journal. */
async function effectsWithoutRecord(store: PgCheckpointStore, log: string, runOfJob: Map<string, string>): Promise<string[]> {
  const missing: string[] = [];
  for (const line of new Set(log.split('\n').filter(Boolean))) {
    const [, job, step] = /^job-(\d+):(\d+)$/.exec(line) ?? [];
    const runId = job !== undefined ? runOfJob.get(job) : undefined;
    if (runId === undefined) {
      missing.push(`${line}: no such job`);
      continue;
    }
    const records = await store.readRecords(runId);
    const callId = `toolu_j${job}_${step}`;
    if (!records.some((r) => r.type === 'ledger' && r.entry.callId === callId)) missing.push(`${line}: no ledger record of ${callId}`);
  }
  return missing;
}

/** What a run's journal says of the call behind an effect line: to tell, when it ran twice, which save points it passed and who held the run. */
async function historyOf(store: PgCheckpointStore, line: string, runOfJob: Map<string, string>): Promise<string> {
  const [, job] = /^job-(\d+):(\d+)$/.exec(line) ?? [];
  const runId = job !== undefined ? runOfJob.get(job) : undefined;
  if (runId === undefined) return `${line}: no run`;
  const said = (await store.readRecords(runId)).map((r) => {
    if (r.type === 'ledger') return `${r.seq} ledger ${r.entry.callId} ${r.entry.status}${r.entry.reason ? ` (${r.entry.reason})` : ''}`;
    if (r.type === 'message') {
      const uses = Array.isArray(r.message.content)
        ? r.message.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id)
        : [];
      return `${r.seq} ${r.message.role}${uses.length > 0 ? ` ${uses.join(',')}` : ''}`;
    }
    if (r.type === 'checkpoint') return `${r.seq} checkpoint ${r.label}`;
    if (r.type === 'status') return `${r.seq} status ${r.status}${r.reason ? ` (${r.reason})` : ''}`;
    if (r.type === 'note') return `${r.seq} note ${r.text.slice(0, 160)}`;
    if (r.type === 'patch') return `${r.seq} patch ${r.patch.path} ${r.patch.beforeHash.slice(0, 8)} -> ${r.patch.afterHash.slice(0, 8)}`;
    return `${r.seq} ${r.type}`;
  });
  const hashes = [1, 2].map((n) => `${n} line(s): ${hashContent(new TextEncoder().encode(`${line}\n`.repeat(n))).slice(0, 8)}`);
  return `history of ${runId} (${line}; ${hashes.join(', ')}):\n${said.join('\n')}`;
}

/** SIGKILL to a worker's process group (it was started detached: a group of its own). */
function killGroup(proc: ChildProcess): void {
  try {
    process.kill(-proc.pid!, 'SIGKILL');
  } catch {
    proc.kill('SIGKILL');
  }
}

/** The pids of a process's children (Linux), none when it cannot tell. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export async function pgKillHarness(options: KillHarnessOptions): Promise<KillHarnessResult> {
  const started = Date.now();
  const say = options.progress ?? (() => undefined);
  const scratch = mkdtempSync(join(tmpdir(), 'ac-pg-kill-'));
  const ws = mkdtempSync(join(tmpdir(), 'ac-pg-kill-ws-'));
  writeFileSync(join(ws, 'README.md'), '# a batch\n');
  const bundle = options.bundle ?? (await bundleCli(scratch));
  const model = await startFakeAnthropic(batchModel({ commands: COMMANDS }));
  const url = await (options.network?.server ?? (await testPostgres())).newDatabase();
  const env = { PATH: process.env['PATH'], HOME: scratch, ANTHROPIC_API_KEY: KEY };
  const common = ['--workspace', ws, '--store', url, '--base-url', model.url, '--yes', '--trust'];
  const observer = new PgCheckpointStore({ url });
  const live = new Set<ChildProcess>();
  const problems: string[] = [];
  try {
    // Queue the batch, 4 CLIs at a time.
    const runOfJob = new Map<string, string>();
    for (let first = 1; first <= options.runs; first += 4) {
      const jobs = Array.from({ length: Math.min(4, options.runs - first + 1) }, (_, i) => first + i);
      const queued = await Promise.all(
        jobs.map((job) => startCli(bundle, ['run', ...common, '--task', `job ${job}`, '--detach'], env).done),
      );
      queued.forEach((q, i) => {
        if (q.code !== 0) throw new Error(`run --detach of job ${jobs[i]} failed: ${q.stderr}`);
        runOfJob.set(String(jobs[i]), q.stdout.trim());
      });
    }
    say(`queued ${options.runs} runs`);

    // Worker slot i: its arguments (its addresses of PG and the model) and how it is started.
    const slots = await Promise.all(
      Array.from({ length: options.workers }, async (_, slot) => {
        const reach = (address: string) => options.network?.reach(slot, address) ?? Promise.resolve(address);
        const argv = ['worker', '--workspace', ws, '--store', await reach(url), '--base-url', await reach(model.url), '--yes', '--trust'];
        return options.network?.command(slot, [bundle, ...argv]) ?? { program: process.execPath, args: [bundle, ...argv] };
      }),
    );
    const stderr: string[] = [];
    let next = 0;
    const start = () => {
      const { program, args } = slots[next++ % options.workers]!;
      const proc = spawn(program, args, { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      proc.stderr!.on('data', (d: Buffer) => stderr.push(d.toString().slice(0, 2000)));
      live.add(proc);
      proc.on('close', () => live.delete(proc));
    };
    for (let i = 0; i < options.workers; i++) start();

    const seen: Seen = new Map();
    let kills = 0;
    let killsMidRun = 0;
    let statuses = new Map<string, string>();
    const deadline = started + options.deadlineMs;
    for (;;) {
      statuses = await observe(observer, seen, problems);
      const left = [...statuses.values()].filter((s) => s !== 'completed').length;
      if (left === 0 || Date.now() > deadline) break;
      const [low, high] = options.killGapMs;
      await sleep(low + Math.random() * (high - low));
      const victim = [...live][Math.floor(Math.random() * live.size)];
      if (victim && kills < options.maxKills) {
        // A kill that cuts a run: the victim holds a lease at that moment (the same pid namespace, also across ip netns).
        const pids = [victim.pid!, ...childrenOf(victim.pid!)];
        const held = await observer.query<{ n: number }>(
          'SELECT count(*)::integer AS n FROM ac_leases WHERE pid = ANY($1) AND holder_id IS NOT NULL',
          [pids],
        );
        if (held.rows[0]!.n > 0) killsMidRun++;
        // The whole group: the CLI started with a key re-executes itself (key-handoff.ts); its child is the worker.
        killGroup(victim);
        live.delete(victim);
        kills++;
        if (kills % 10 === 0) say(`${kills} kills (${killsMidRun} mid-run), ${left} runs left`);
      }
      while (live.size < options.workers) start();
    }
    for (const proc of live) killGroup(proc);
    statuses = await observe(observer, seen, problems);

    const log = effectsLog(ws);
    const duplicated = duplicatedEffects(log);
    for (const line of duplicated) problems.push(`effect ran twice: ${line}`, await historyOf(observer, line, runOfJob));
    for (const name of strayFiles(ws)) problems.push(`a file no command made is left in the workspace: effects/${name}`);
    const unrecorded = await effectsWithoutRecord(observer, log, runOfJob);
    problems.push(...unrecorded);
    const lost = problems.filter((p) => p.startsWith('journal row')).length + unrecorded.length;
    for (const [job, runId] of runOfJob) {
      const status = statuses.get(runId);
      if (status !== 'completed') problems.push(`job ${job} (run ${runId}) is ${status ?? 'missing'}`);
    }
    if (problems.length > 0) problems.push(`workers said: ${stderr.slice(-20).join('').slice(-4000)}`);
    return {
      workers: options.workers,
      runs: options.runs,
      kills,
      kills_mid_run: killsMidRun,
      duplicated_effects: duplicated.length,
      lost_records: lost,
      completed: [...runOfJob.values()].filter((id) => statuses.get(id) === 'completed').length,
      seconds: Math.round((Date.now() - started) / 1000),
      problems,
    };
  } finally {
    for (const proc of live) killGroup(proc);
    await observer.dispose();
    await model.close();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
}
