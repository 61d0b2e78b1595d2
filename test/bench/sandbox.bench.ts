// run_command's cost of the sandbox: `true` run RUNS times through the command runner as the hosts
// use it, plainly and in bubblewrap, on a small workspace that has a .git, a .vscode and nested
// folders (so the per-command plan does real work). Runs alternate, so a busy machine weighs on both
// sides alike. Target: overhead_ms_p50 <= 30. The same again in a generated tree of babel's shape
// (babel-tree.ts: 27.7k files in 13k folders), and in SANDBOX_BENCH_REPO when set (a real clone):
// each command runs in a copy-on-write view whose capture walks only what the command changed, so
// the repository's size should not show. capture_ms_p50: a command that changes 10 files against one
// that changes none (the change set captured, then discarded unapplied). In the same tree: a
// scripted CLI run's `true` from the model's answer to the next request, sandboxed against
// --no-sandbox (sandbox-run.ts); an npm-ci-sized ignored output and copy-up of a 1 GB file
// (sandbox-apply.ts); restore fidelity of a run whose changes come half from commands
// (sandbox-fidelity.ts). SANDBOX_BENCH_QUICK=1 runs fewer rounds. Then the
// allowlist network's figures (netproxy-bench.ts): the proxy's added time for a 1 MB download
// (target <= 5 ms) and a command's start with the forwarder against today's.
// Prints ONE JSON object.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CommandRunner } from '../../src/core/ports';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { detectSandbox } from '../../src/host/node/sandbox/index';
import { sandboxRequest } from '../../src/host/node/agent-host/commands';
import { bundleCli } from '../support/cli-process';
import { writeBabelTree } from './babel-tree';
import { netFigures } from './netproxy-bench';
import { answerFigures } from './sandbox-run';
import { applyFigures } from './sandbox-apply';
import { fidelityFigures } from './sandbox-fidelity';

const RUNS = Number(process.env.SANDBOX_BENCH_RUNS ?? 100);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
}

async function timed(runner: CommandRunner, cwd: string): Promise<number> {
  const start = performance.now();
  const result = await runner.run('true', { cwd, timeoutMs: 10_000, maxOutputBytes: 1024 });
  if (result.exitCode !== 0) throw new Error(`true failed: ${JSON.stringify(result)}`);
  return performance.now() - start;
}

const REPO_RUNS = Number(process.env.SANDBOX_BENCH_REPO_RUNS ?? 30);
const QUICK = process.env.SANDBOX_BENCH_QUICK === '1';

/** `true` run `runs` times in `ws`, plainly and sandboxed, alternating: the two medians and their difference. */
async function overhead(ws: string, store: string, runs: number): Promise<{ sandboxed: number; plain: number; overhead: number }> {
  const plain = createNodeCommandRunner();
  const sandboxed = createNodeCommandRunner({
    sandbox: () => sandboxRequest({ sandbox: 'auto', network: 'on' }, { roots: [ws], store: { kind: 'files', dir: store } }),
  });
  const plainMs: number[] = [];
  const sandboxedMs: number[] = [];
  await timed(plain, ws);
  await timed(sandboxed, ws);
  for (let i = 0; i < runs; i++) {
    plainMs.push(await timed(plain, ws));
    sandboxedMs.push(await timed(sandboxed, ws));
  }
  const p50Sandboxed = median(sandboxedMs);
  const p50Plain = median(plainMs);
  return { sandboxed: p50Sandboxed, plain: p50Plain, overhead: Math.round((p50Sandboxed - p50Plain) * 10) / 10 };
}

/** Ten new files in the command's view (discarded unapplied: a real clone stays as it is). */
const TEN_FILES = 'mkdir -p bench-capture && for i in 0 1 2 3 4 5 6 7 8 9; do echo $$ > bench-capture/f$i.txt; done';

async function timedCommand(runner: CommandRunner, cwd: string, command: string): Promise<number> {
  const start = performance.now();
  const result = await runner.run(command, { cwd, timeoutMs: 10_000, maxOutputBytes: 1024 });
  await result.changes?.discard();
  if (result.exitCode !== 0) throw new Error(`${command} failed: ${JSON.stringify(result)}`);
  return performance.now() - start;
}

/** A sandboxed command that changes 10 files against one that changes none (alternating): the medians' difference. */
async function capture(ws: string, store: string, runs: number): Promise<{ none: number; ten: number; capture: number }> {
  const sandboxed = createNodeCommandRunner({
    sandbox: () => sandboxRequest({ sandbox: 'auto', network: 'on' }, { roots: [ws], store: { kind: 'files', dir: store } }),
  });
  const none: number[] = [];
  const ten: number[] = [];
  await timedCommand(sandboxed, ws, TEN_FILES);
  for (let i = 0; i < runs; i++) {
    none.push(await timedCommand(sandboxed, ws, 'true'));
    ten.push(await timedCommand(sandboxed, ws, TEN_FILES));
  }
  return { none: median(none), ten: median(ten), capture: Math.round((median(ten) - median(none)) * 10) / 10 };
}

async function main(): Promise<void> {
  const kind = detectSandbox();
  if (kind.kind !== 'bwrap') throw new Error(`bench:sandbox needs bubblewrap: ${kind.kind === 'none' ? kind.reason : kind.kind}`);
  const base = mkdtempSync(join(tmpdir(), 'bench-sandbox-'));
  const ws = join(base, 'ws');
  for (const dir of ['.git/hooks', '.vscode', 'src/a/b', 'test']) mkdirSync(join(ws, dir), { recursive: true });
  writeFileSync(join(ws, '.vscode', 'settings.json'), '{}\n');
  for (let i = 0; i < 50; i++) writeFileSync(join(ws, 'src', `f${i}.ts`), 'x\n');
  const store = join(base, 'store');
  mkdirSync(store);
  try {
    const small = await overhead(ws, store, RUNS);
    const repoRoot = join(base, 'repo');
    const tree = writeBabelTree(repoRoot);
    const repo = await overhead(repoRoot, store, REPO_RUNS);
    const captured = await capture(repoRoot, store, REPO_RUNS);
    const answers = await answerFigures(await bundleCli(base), repoRoot, base, QUICK ? 10 : 20, QUICK ? 1 : 3);
    const applied = await applyFigures(repoRoot, store, QUICK ? 1 : 3);
    const fidelity = await fidelityFigures(base);
    const net = await netFigures(ws, store, RUNS);
    const real = process.env.SANDBOX_BENCH_REPO;
    const realRepo = real !== undefined && real !== '' ? await overhead(real, store, REPO_RUNS) : undefined;
    const realCapture = real !== undefined && real !== '' ? await capture(real, store, REPO_RUNS) : undefined;
    process.stdout.write(
      `${JSON.stringify({
        command_ms_p50_sandboxed: small.sandboxed,
        command_ms_p50_plain: small.plain,
        overhead_ms_p50: small.overhead,
        overhead_ms_p50_repo: repo.overhead,
        repo_files: tree.files,
        repo_folders: tree.folders,
        ...answers,
        capture_ms_p50: captured.capture,
        command_ms_p50_ten_files: captured.ten,
        target_capture_ms_p50: 50,
        ...applied,
        ...fidelity,
        ...(realRepo !== undefined ? { overhead_ms_p50_real_repo: realRepo.overhead, real_repo: real } : {}),
        ...(realCapture !== undefined ? { capture_ms_p50_real_repo: realCapture.capture } : {}),
        runs: RUNS,
        target_overhead_ms_p50: 30,
        network_allowlist: net,
        // The figures follow the machine's load: on 2 busy cores every process start is several times slower.
        load_average_1m: Math.round(loadavg()[0]! * 10) / 10,
        uptime: execFileSync('uptime', { encoding: 'utf8' }).trim(),
      })}\n`,
    );
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
