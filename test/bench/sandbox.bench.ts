// run_command's cost of the sandbox: `true` run RUNS times through the command runner as the hosts
// use it, plainly and in bubblewrap, on a small workspace that has a .git, a .vscode and nested
// folders (so the per-command plan does real work). Runs alternate, so a busy machine weighs on both
// sides alike. Target: overhead_ms_p50 <= 30. Prints ONE JSON object.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CommandRunner } from '../../src/core/ports';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { detectSandbox, sandboxRequestOf } from '../../src/host/node/sandbox/index';

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
    const plain = createNodeCommandRunner();
    const sandboxed = createNodeCommandRunner({ sandbox: () => sandboxRequestOf({ mode: 'auto', network: 'on', roots: [ws], store }) });
    const plainMs: number[] = [];
    const sandboxedMs: number[] = [];
    await timed(plain, ws);
    await timed(sandboxed, ws);
    for (let i = 0; i < RUNS; i++) {
      plainMs.push(await timed(plain, ws));
      sandboxedMs.push(await timed(sandboxed, ws));
    }
    const p50Sandboxed = median(sandboxedMs);
    const p50Plain = median(plainMs);
    process.stdout.write(
      `${JSON.stringify({
        command_ms_p50_sandboxed: p50Sandboxed,
        command_ms_p50_plain: p50Plain,
        overhead_ms_p50: Math.round((p50Sandboxed - p50Plain) * 10) / 10,
        runs: RUNS,
        target_overhead_ms_p50: 30,
        // The figures follow the machine's load: on 2 busy cores every process start is several times slower.
        load_average_1m: Math.round(loadavg()[0]! * 10) / 10,
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
