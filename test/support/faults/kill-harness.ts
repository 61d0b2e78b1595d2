import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { MessageParam } from '../../../src/core/model/messages';
import { scanJournal } from '../../../src/core/store/journal-format';
import { foldRecords } from '../../../src/core/store/history';
import type { StoredRecord } from '../../../src/core/store/records';
import { startFakeAnthropic } from '../fake-anthropic/server';
import { checkAcknowledged, checkFinal } from './agent-checks';
import { NOTES_BEFORE, NOTES_FILE, scriptResponder } from './agent-script';
import { Prng } from './prng';

// kill -9 of the headless CLI (dist/cli.js) at a random instant or right after its Nth journal
// fsync (a save point), then `resume` until the run completes (resumes may be killed too). After
// each process: the journal opens (torn tail cut on resume), `status --json` works, and every
// record complete in the journal before the kill is still there, unchanged, afterwards.

const REPO = resolve(__dirname, '../../..');
export const CLI_PATH = join(REPO, 'dist/cli.js');
const PRELOAD = join(__dirname, 'kill-preload.js');
const MAX_PROCESSES = 12;

export type KillPlan =
  | { readonly kind: 'savePoint'; readonly afterSync: number }
  /** Each killed process dies at a seeded instant up to maxDelayMs after its first file open. */
  | { readonly kind: 'random'; readonly maxDelayMs: number; readonly seed: number; readonly resumeKills: number };

export interface KillRunResult {
  readonly point: string;
  readonly ok: boolean;
  readonly problems: string[];
  readonly kills: number;
  readonly resumes: number;
  readonly duplicates: number;
  readonly lostAcknowledged: number;
  readonly executions: number;
  readonly seconds: number;
}

interface ProcessResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

const FIRST_IO = 'faults:first-io';

/** Runs the CLI; `killAfterMs` counts from its first file open (the preload's marker line). */
function runCli(
  cli: string,
  args: readonly string[],
  options: { env?: Record<string, string>; killAfterMs?: number; preload?: boolean } = {},
): Promise<ProcessResult> {
  return new Promise((done) => {
    const nodeArgs = options.preload ? ['--require', PRELOAD, cli, ...args] : [cli, ...args];
    const child = spawn(process.execPath, nodeArgs, {
      env: { ...process.env, ANTHROPIC_API_KEY: 'sk-faults-test', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    let timer: NodeJS.Timeout | undefined;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (options.killAfterMs !== undefined && timer === undefined && stderr.includes(FIRST_IO)) {
        timer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
      }
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      done({ code, signal, stdout, stderr });
    });
  });
}

/** Records of complete commit groups in a run's journal, as a separate process reads it now. */
async function journalRecords(store: string, runId: string): Promise<StoredRecord[]> {
  return (await scanRun(store, runId)).records;
}

async function scanRun(store: string, runId: string): Promise<{ records: StoredRecord[]; tornBytes: number }> {
  const path = join(store, 'runs', runId, 'journal.jsonl');
  if (!existsSync(path)) return { records: [], tornBytes: 0 };
  const scan = await scanJournal(new Uint8Array(readFileSync(path)), { file: path });
  if (scan.damage) throw new Error(`${path} damaged at ${scan.damage.offset}: ${scan.damage.message}`);
  return { records: scan.records, tornBytes: scan.tornTail?.bytes ?? 0 };
}

/** The run folder holding a complete run record (a kill during creation may leave an empty one). */
async function findRun(store: string): Promise<string | undefined> {
  const runs = join(store, 'runs');
  if (!existsSync(runs)) return undefined;
  for (const id of readdirSync(runs).sort().reverse()) {
    if ((await journalRecords(store, id).catch(() => [])).length > 0) return id;
  }
  return undefined;
}

class KillRun {
  readonly base = mkdtempSync(join(tmpdir(), 'ac-kill-'));
  readonly ws = join(this.base, 'ws');
  readonly store = join(this.base, 'store');
  // Inside the workspace: the command runs in the sandbox, which sees the workspace and a private /tmp.
  readonly counter = join(this.ws, 'counter.log');
  readonly problems: string[] = [];
  acknowledged = new Map<number, StoredRecord>();
  runId: string | undefined;
  kills = 0;
  resumes = 0;
  lost = 0;
  url = '';
  requestCount: () => Promise<number> = async () => 0;

  constructor(readonly cli: string) {
    mkdirSync(this.ws);
    writeFileSync(join(this.ws, NOTES_FILE), NOTES_BEFORE);
  }

  commonArgs(): string[] {
    return ['--workspace', this.ws, '--store', this.store, '--provider', 'anthropic', '--base-url', this.url, '--yes', '--trust'];
  }

  executions(): number {
    return existsSync(this.counter)
      ? readFileSync(this.counter, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '').length
      : 0;
  }

  /** After a process ended: the journal opens, nothing acknowledged is gone, status --json works. */
  async checkAfter(killed: boolean, finalExit: boolean): Promise<void> {
    this.runId ??= await findRun(this.store);
    if (this.runId === undefined) return;
    let records: StoredRecord[];
    try {
      const scan = await scanRun(this.store, this.runId);
      records = scan.records;
      // A process that ended by itself leaves no torn tail: any tail a kill left was cut on resume.
      if (!killed && scan.tornBytes > 0) this.problems.push(`a torn tail of ${scan.tornBytes} bytes after a clean exit`);
    } catch (error) {
      this.problems.push(`the journal does not open: ${(error as Error).message}`);
      return;
    }
    const lost = checkAcknowledged(records, this.acknowledged);
    this.lost += lost.length;
    this.problems.push(...lost);
    if (killed) for (const record of records) this.acknowledged.set(record.seq, record);
    // The end state is checked from the journal itself (finish); status --json after every cut.
    if (finalExit) return;
    const status = await runCli(this.cli, ['status', '--store', this.store, '--run', this.runId, '--json']);
    try {
      if (status.code !== 0) throw new Error(`exit ${status.code}: ${status.stderr.trim()}`);
      const json = JSON.parse(status.stdout) as { status?: unknown };
      if (typeof json.status !== 'string') throw new Error('no status');
    } catch (error) {
      this.problems.push(`status --json failed after ${killed ? 'a kill' : 'an exit'}: ${(error as Error).message}`);
    }
  }

  async finish(requests: readonly MessageParam[][]): Promise<{ duplicates: number; executions: number }> {
    const executions = this.executions();
    if (this.runId === undefined) {
      this.problems.push('no run was found after completion');
      return { duplicates: Math.max(0, executions - 1), executions };
    }
    const records = await journalRecords(this.store, this.runId);
    const state = foldRecords(records);
    if (!state.ended || state.ended.status !== 'completed') this.problems.push(`the run ended as ${state.ended?.status ?? state.status}`);
    const notesPath = join(this.ws, NOTES_FILE);
    const verdict = checkFinal({
      messages: state.messages,
      executions,
      notes: existsSync(notesPath) ? readFileSync(notesPath, 'utf8') : null,
      requests,
    });
    this.problems.push(...verdict.problems);
    return { duplicates: verdict.duplicates, executions };
  }

  dispose(): void {
    rmSync(this.base, { recursive: true, force: true });
  }
}

/** A completed run says so and is not resumed: exit 0, no model request, no command run. */
async function checkNotResumedAgain(run: KillRun, requestsBefore: number): Promise<void> {
  const executions = run.executions();
  const again = await runCli(run.cli, ['resume', ...run.commonArgs(), ...(run.runId ? ['--run', run.runId] : [])]);
  if (again.code !== 0 || !/already completed|nothing to resume/.test(again.stderr))
    run.problems.push(`resume of the completed run: exit ${again.code}: ${again.stderr.trim()}`);
  if (run.executions() !== executions) run.problems.push('resuming the completed run ran the command again');
  if (requestsBefore !== (await run.requestCount())) run.problems.push('resuming the completed run called the model');
}

/** One run of the script, killed as planned, resumed until it completes, then checked. */
export async function killRun(plan: KillPlan, cli = CLI_PATH): Promise<KillRunResult> {
  const started = Date.now();
  const point = plan.kind === 'savePoint' ? `kill after journal fsync ${plan.afterSync}` : `random kill seed ${plan.seed}`;
  const prng = new Prng(plan.kind === 'random' ? plan.seed : plan.afterSync);
  const run = new KillRun(cli);
  const fake = await startFakeAnthropic(scriptResponder(run.counter));
  run.url = fake.url;
  run.requestCount = async () => fake.requests.length;
  let completed = false;
  try {
    for (let n = 0; n < MAX_PROCESSES && !completed && run.problems.length === 0; n++) {
      const killThis = plan.kind === 'savePoint' ? n === 0 : n <= plan.resumeKills;
      const killAfterMs = plan.kind === 'random' && killThis ? prng.int(plan.maxDelayMs + 1) : undefined;
      const env: Record<string, string> =
        plan.kind === 'savePoint' && killThis ? { FAULTS_KILL_AFTER_JOURNAL_SYNC: String(plan.afterSync) } : {};
      const create = run.runId === undefined && (await findRun(run.store)) === undefined;
      if (!create) run.resumes += 1;
      const args = create
        ? ['run', ...run.commonArgs(), '--task', 'edit the notes and count']
        : ['resume', ...run.commonArgs(), ...(run.runId ? ['--run', run.runId] : [])];
      const result = await runCli(cli, args, { env, preload: true, ...(killAfterMs !== undefined ? { killAfterMs } : {}) });
      const killed = result.signal === 'SIGKILL';
      if (killed) run.kills += 1;
      await run.checkAfter(killed, result.code === 0);
      if (result.code === 0) completed = true;
      else if (!killed) run.problems.push(`${args[0]} exited ${result.code}: ${result.stderr.trim().split('\n').slice(-2).join(' / ')}`);
    }
    if (!completed && run.problems.length === 0) run.problems.push(`not completed after ${MAX_PROCESSES} processes`);
    if (completed && plan.kind === 'savePoint') await checkNotResumedAgain(run, fake.requests.length);
    for (const refused of fake.refused) run.problems.push(`the API would refuse request ${refused.index}: ${refused.message}`);
    const requests = fake.requests.map((r) => ((r.body as { messages?: MessageParam[] } | undefined)?.messages ?? []) as MessageParam[]);
    const { duplicates, executions } = completed
      ? await run.finish(requests)
      : { duplicates: Math.max(0, run.executions() - 1), executions: run.executions() };
    const seconds = (Date.now() - started) / 1000;
    return {
      point,
      ok: run.problems.length === 0,
      problems: run.problems,
      kills: run.kills,
      resumes: run.resumes,
      duplicates,
      lostAcknowledged: run.lost,
      executions,
      seconds,
    };
  } finally {
    await fake.close();
    if (run.problems.length === 0) run.dispose();
  }
}

/** Journal fsyncs (commit groups) of one clean CLI run, how long it took, and the CLI's start-up time. */
export async function measureCliRun(cli = CLI_PATH): Promise<{ syncs: number; ms: number; startupMs: number }> {
  let started = Date.now();
  const countDir = mkdtempSync(join(tmpdir(), 'ac-kill-count-'));
  const countFile = join(countDir, 'syncs');
  const ws = join(countDir, 'ws');
  const fake = await startFakeAnthropic(scriptResponder(join(ws, 'counter.log')));
  mkdirSync(ws);
  writeFileSync(join(ws, NOTES_FILE), NOTES_BEFORE);
  try {
    await runCli(cli, ['status', '--store', join(countDir, 'none')]);
    const startupMs = Date.now() - started;
    started = Date.now();
    const result = await runCli(
      cli,
      [
        'run',
        '--workspace',
        ws,
        '--store',
        join(countDir, 'store'),
        '--provider',
        'anthropic',
        '--base-url',
        fake.url,
        '--yes',
        '--trust',
        '--task',
        'count',
      ],
      {
        preload: true,
        env: { FAULTS_COUNT_FILE: countFile },
      },
    );
    if (result.code !== 0) throw new Error(`clean run exited ${result.code}: ${result.stderr}`);
    const syncs = readFileSync(countFile, 'utf8')
      .split('\n')
      .filter((l) => l !== '').length;
    return { syncs, ms: Date.now() - started, startupMs };
  } finally {
    await fake.close();
    rmSync(countDir, { recursive: true, force: true });
  }
}

/** Runs plans with at most `concurrency` CLI runs at a time. */
export async function killRuns(
  plans: readonly KillPlan[],
  concurrency: number,
  options: { cli?: string; onResult?: (result: KillRunResult) => void } = {},
): Promise<KillRunResult[]> {
  const results: KillRunResult[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plans.length) {
      const plan = plans[next++]!;
      const result = await killRun(plan, options.cli);
      results.push(result);
      options.onResult?.(result);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return results;
}
