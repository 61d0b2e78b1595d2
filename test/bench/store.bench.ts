// npm run bench:store: the file store's cost per step and its resume, with steps of realistic
// size compacted every ~150k tokens as the runtime does (store-steps.ts). Prints one JSON object.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, symlinkSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildSync } from 'esbuild';
import type { RunWriter } from '../../src/core/store/contract';
import type { StoreFileHandle } from '../../src/core/store/fs-port';
import type { StoredRecord } from '../../src/core/store/records';
import { NodeStoreFs } from '../../src/host/node/node-store-fs';
import { Prng } from '../support/faults/prng';
import { openFileStore } from '../../src/host/node/store-factory';
import { compactionSteps, latestStepAtPhase, phaseOf, runInput, step, type History, type Sink } from './store-steps';

const STEPS = 1000;
const RESUME_STEPS = 10_000;
const SMALL_RESUME_STEPS = 100;
/** Resumes of each kind, interleaved; their median is the figure (a resume on this 2-core VM varies by a third). */
const PROCESSES = 9;
const RUN_ID = 'big';

/** The files the store writes whole or appends to besides the journal: pending.json and refs.json. */
const FACTS_FILE = /(^|\/)(pending|refs)\.json$/;

/** The Node port, counting every byte written through it, and those that reach pending.json and refs.json (appended, or renamed into place). */
class CountingFs extends NodeStoreFs {
  written = 0;
  factsWritten = 0;
  private readonly temps = new Map<string, number>();
  constructor(private readonly skipSync = false) {
    super();
  }
  override async write(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
    this.written += bytes.length;
    if (FACTS_FILE.test(handle.path)) this.factsWritten += bytes.length;
    else if (handle.path.endsWith('.tmp')) this.temps.set(handle.path, (this.temps.get(handle.path) ?? 0) + bytes.length);
    await super.write(handle, bytes);
  }
  override async rename(from: string, to: string): Promise<void> {
    if (FACTS_FILE.test(to)) this.factsWritten += this.temps.get(from) ?? 0;
    this.temps.delete(from);
    await super.rename(from, to);
  }
  override async sync(handle: StoreFileHandle): Promise<void> {
    if (!this.skipSync) await super.sync(handle);
  }
  override async syncDir(path: string): Promise<void> {
    if (!this.skipSync) await super.syncDir(path);
  }
}

/** Lines of the .ts files under `dir`, recursively (as wc -l counts them), except those under `skip`. */
function linesUnder(dir: string, skip?: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === skip ? sum : sum + linesUnder(path, skip);
    return entry.name.endsWith('.ts') ? sum + (readFileSync(path, 'utf8').match(/\n/g)?.length ?? 0) : sum;
  }, 0);
}

/** The store's size as the issue counts it: src/core/store (its neutral part, and file/) and src/host/node/pg. */
function storeLines(): { total: number; parts: { core: number; file: number; pg: number } } {
  const store = join(__dirname, '../../src/core/store');
  const file = join(store, 'file');
  const parts = { core: linesUnder(store, file), file: linesUnder(file), pg: linesUnder(join(__dirname, '../../src/host/node/pg')) };
  return { total: parts.core + parts.file + parts.pg, parts };
}

const recordBytes = (records: readonly StoredRecord[]) => records.reduce((sum, r) => sum + JSON.stringify(r).length + 1, 0);

function storeSink(writer: RunWriter, putBlob: (b: Uint8Array) => Promise<string>): Sink {
  return { commit: async (records) => recordBytes(await writer.append(records)), blob: putBlob };
}

/**
 * The comparator: a store that keeps the whole run (its records and blobs) as one JSON file and
 * rewrites it after every step. Its bytes are counted, not written: `state` is that file's size.
 */
function withBaseline(sink: Sink): Sink & { stateBytes: number; baselineWritten: number; endStep(): void } {
  const counted = {
    stateBytes: 2,
    baselineWritten: 0,
    commit: async (records: Parameters<Sink['commit']>[0]) => {
      const stored = await sink.commit(records);
      counted.stateBytes += stored;
      return stored;
    },
    blob: async (bytes: Uint8Array) => {
      counted.stateBytes += JSON.stringify(new TextDecoder().decode(bytes)).length + 1;
      return sink.blob(bytes);
    },
    endStep: () => void (counted.baselineWritten += counted.stateBytes),
  };
  return counted;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number) => Math.round(x * 100) / 100;

/** STEPS steps through the writer, fsync and all: bytes written against the new data, step 1,000 against step 10, the event loop's p99. */
async function measureSteps(
  root: string,
): Promise<{ bytesRatio: number; baselineRatio: number; stepRatio: number; p99: number; snapshotBytes: number }> {
  const fs = new CountingFs();
  const store = openFileStore(root, { fs });
  const writer = await store.createRun(runInput('steps'));
  const sink = withBaseline(storeSink(writer, (b) => store.putBlob(b)));
  const history: History = { messages: 0, tokens: 0 };
  const times: number[] = [];
  let newBytes = 0;
  const before = fs.written;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  for (let n = 1; n <= STEPS; n++) {
    const t = performance.now();
    newBytes += await step(sink, n, history);
    times.push(performance.now() - t);
    sink.endStep();
  }
  loop.disable();
  await writer.close();
  const runDir = store.runDir('steps');
  const snapshotBytes = readdirSync(runDir)
    .filter((name) => name.startsWith('snapshot-'))
    .reduce((sum, name) => sum + statSync(join(runDir, name)).size, 0);
  // "step 10" and "step 1000": medians of the 20-step windows around them.
  const stepRatio = median(times.slice(STEPS - 20)) / median(times.slice(0, 20));
  return {
    bytesRatio: (fs.written - before) / newBytes,
    baselineRatio: sink.baselineWritten / newBytes,
    stepRatio,
    p99: loop.percentile(99) / 1e6,
    snapshotBytes,
  };
}

/** Steps over which the bytes a step writes to pending.json and refs.json are averaged, ending at step 1,000 and at step 10,000. */
const FACTS_WINDOW = 500;

/**
 * A run of `steps` steps written by the writer (no fsync: the fixture's speed is not measured),
 * with the snapshots it leaves; its journal's size, and the bytes a step wrote to pending.json and
 * refs.json over the FACTS_WINDOW steps up to each of `factsAt`.
 */
async function buildRun(root: string, steps: number, factsAt: readonly number[] = []): Promise<{ bytes: number; factsPerStep: number[] }> {
  const fs = new CountingFs(true);
  const store = openFileStore(root, { fs });
  const writer = await store.createRun(runInput(RUN_ID));
  const history: History = { messages: 0, tokens: 0 };
  const sink = storeSink(writer, (b) => store.putBlob(b));
  const factsPerStep: number[] = [];
  let from = 0;
  for (let n = 1; n <= steps; n++) {
    if (factsAt.includes(n + FACTS_WINDOW - 1)) from = fs.factsWritten;
    await step(sink, n, history);
    if (factsAt.includes(n)) factsPerStep.push(Math.round((fs.factsWritten - from) / FACTS_WINDOW));
  }
  await writer.close();
  return { bytes: statSync(store.journalPath(RUN_ID)).size, factsPerStep };
}

function bundleChild(outDir: string): string {
  const outfile = join(outDir, 'store-resume-child.js');
  buildSync({
    entryPoints: [join(__dirname, 'store-resume-child.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}

interface ResumeFigures {
  readonly resume_ms: number;
  readonly resume_eventloop_max_ms: number;
  readonly resume_rss_mb: number;
  readonly messages: number;
}

function resumeInNewProcess(child: string, root: string, steps: number | 'killed'): ResumeFigures {
  const out = execFileSync(process.execPath, [child, 'resume', root, RUN_ID, String(steps)], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as ResumeFigures;
}

/** A random point of a run's last tenth (between two snapshots), and a delay of up to 3 ms after that step's last commit. */
function randomCut(steps: number, random: () => number): { killAt: number; delayMs: number } {
  return { killAt: steps - Math.floor(random() * Math.max(1, Math.floor(steps / 10))), delayMs: random() * 3 };
}

/** A run written by its own process and cut by kill -9 `delayMs` after step `killAt` finished (maybe within the next step); the writer never closes. */
async function buildKilledRun(
  child: string,
  root: string,
  steps: number,
  { killAt, delayMs }: { killAt: number; delayMs: number },
): Promise<number> {
  const proc = spawn(process.execPath, [child, 'build', root, RUN_ID, String(steps)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let last = 0;
  await new Promise<void>((resolve, reject) => {
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      last = Number(chunk.trim().split('\n').pop());
      if (last >= killAt && proc.exitCode === null && !proc.killed) setTimeout(() => proc.kill('SIGKILL'), delayMs);
    });
    proc.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`build exited ${code}`))));
  });
  return last;
}

/** Resumes of copies of a killed run (each resume meets the kill's state: a dead holder, maybe a torn tail). */
function resumeKilled(child: string, killed: string, scratch: string, i: number): ResumeFigures {
  const copy = join(scratch, `killed-copy-${i}`);
  // The run's files are copied; the blobs (which a resume does not read) are shared.
  cpSync(killed, copy, { recursive: true, filter: (path) => path !== join(killed, 'blobs') });
  symlinkSync(join(killed, 'blobs'), join(copy, 'blobs'));
  // A killed writer's records were fsynced as it went: the copy's dirty pages are flushed first, or
  // the resume's first fsync waits for 130 MB that a real run would not have left unwritten.
  execFileSync('sync');
  try {
    return resumeInNewProcess(child, copy, 'killed');
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'store-bench-'));
  try {
    const steps = await measureSteps(join(root, 'steps'));
    progress('steps');
    const { bytes: bigBytes, factsPerStep } = await buildRun(join(root, 'big'), RESUME_STEPS, [1000, RESUME_STEPS]);
    const { bytes: smallBytes } = await buildRun(join(root, 'small'), SMALL_RESUME_STEPS);
    progress('resume fixtures');
    execFileSync('sync');
    const child = bundleChild(root);
    const big: ResumeFigures[] = [];
    const small: ResumeFigures[] = [];
    // Interleaved, so both meet the same disk and host.
    for (let i = 0; i < PROCESSES; i++) {
      for (const [name, steps, into] of [
        ['big', RESUME_STEPS, big],
        ['small', SMALL_RESUME_STEPS, small],
      ] as const) {
        into.push(resumeInNewProcess(child, join(root, name), steps));
      }
    }
    const seed = Number(process.env['BENCH_SEED'] ?? Date.now() % 100_000);
    // Seeded, so that a bench run can be repeated.
    const prng = new Prng(seed);
    const random = () => prng.next();
    const killedBig = await buildKilledRun(child, join(root, 'killed-big'), RESUME_STEPS, randomCut(RESUME_STEPS, random));
    const killedSmall = await buildKilledRun(child, join(root, 'killed-small'), SMALL_RESUME_STEPS, randomCut(SMALL_RESUME_STEPS, random));
    // The same comparisons with the long run ended (or cut) at the short one's place in its compaction
    // cycle: the same live context, so that the ratio shows what the run's length alone costs. (A
    // random cut of the long run lands anywhere in its cycle; the short run's last tenth lies early in its second.)
    const compactions = await compactionSteps(RESUME_STEPS);
    const samePhaseSteps = latestStepAtPhase(RESUME_STEPS, phaseOf(SMALL_RESUME_STEPS, compactions), compactions);
    await buildRun(join(root, 'big-same'), samePhaseSteps);
    const samePhaseCut = { killAt: latestStepAtPhase(RESUME_STEPS, phaseOf(killedSmall, compactions), compactions), delayMs: random() * 3 };
    const killedBigSame = await buildKilledRun(child, join(root, 'killed-big-same'), RESUME_STEPS, samePhaseCut);
    execFileSync('sync');
    progress('killed fixtures');
    const bigKilled: ResumeFigures[] = [];
    const smallKilled: ResumeFigures[] = [];
    const bigSame: ResumeFigures[] = [];
    const bigKilledSame: ResumeFigures[] = [];
    for (let i = 0; i < PROCESSES; i++) {
      bigKilled.push(resumeKilled(child, join(root, 'killed-big'), root, i));
      smallKilled.push(resumeKilled(child, join(root, 'killed-small'), root, i));
      bigSame.push(resumeInNewProcess(child, join(root, 'big-same'), samePhaseSteps));
      bigKilledSame.push(resumeKilled(child, join(root, 'killed-big-same'), root, i));
    }
    const sameMs = median(bigSame.map((r) => r.resume_ms));
    const killedSameMs = median(bigKilledSame.map((r) => r.resume_ms));
    const resumeMs = median(big.map((r) => r.resume_ms));
    const resumeMs100 = median(small.map((r) => r.resume_ms));
    const killedMs = median(bigKilled.map((r) => r.resume_ms));
    const killedMs100 = median(smallKilled.map((r) => r.resume_ms));
    const lines = storeLines();
    console.log(
      JSON.stringify({
        steps: STEPS,
        bytes_ratio: round(steps.bytesRatio),
        // The whole run as one JSON file rewritten every step (counted, not written), for comparison.
        baseline_bytes_ratio: round(steps.baselineRatio),
        snapshot_bytes: steps.snapshotBytes,
        // Bytes a step writes to pending.json and refs.json (appended, or rewritten whole), around step 1,000 and step 10,000 of the long run.
        facts_bytes_per_step_1k: factsPerStep[0],
        facts_bytes_per_step_10k: factsPerStep[1],
        step_ratio: round(steps.stepRatio),
        eventloop_p99_ms: round(steps.p99),
        resume_steps: RESUME_STEPS,
        resume_journal_mb: round(bigBytes / 2 ** 20),
        resume_ms: round(resumeMs),
        resume_ms_max: round(Math.max(...big.map((r) => r.resume_ms))),
        resume_ms_100: round(resumeMs100),
        resume_journal_mb_100: round(smallBytes / 2 ** 20),
        resume_ratio_10k_vs_100: round(resumeMs / resumeMs100),
        // The same after kill -9 at a random point (not a clean close): a dead holder's lease, maybe a torn tail.
        resume_killed_ms: round(killedMs),
        resume_killed_ms_100: round(killedMs100),
        resume_killed_ratio: round(killedMs / killedMs100),
        resume_killed_steps: [killedBig, killedSmall],
        resume_killed_seed: seed,
        // The long run at the short run's place in its compaction cycle (the same live context).
        resume_ms_same_context: round(sameMs),
        resume_ratio_same_context: round(sameMs / resumeMs100),
        resume_killed_ms_same_context: round(killedSameMs),
        resume_killed_ratio_same_context: round(killedSameMs / killedMs100),
        resume_same_context_steps: [samePhaseSteps, killedBigSame],
        resume_same_context_messages: [bigSame[0]!.messages, bigKilledSame[0]!.messages, smallKilled[0]!.messages],
        // The live context each resume read: the messages since the run's last compaction.
        resume_messages: big[0]!.messages,
        resume_messages_100: small[0]!.messages,
        resume_rss_mb: round(median(big.map((r) => r.resume_rss_mb))),
        resume_eventloop_max_ms: round(median(big.map((r) => r.resume_eventloop_max_ms))),
        resume_processes: PROCESSES,
        resume_node: process.version,
        store_lines: lines.total,
        store_lines_parts: lines.parts,
      }),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const started = performance.now();
const progress = (what: string) => process.stderr.write(`${what} done at ${Math.round(performance.now() - started)} ms\n`);

if (require.main === module) void main();
