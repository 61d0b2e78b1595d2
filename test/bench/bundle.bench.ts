// bench:bundle: what ships and what starting the CLI costs. Builds the .vsix as `npm run package`
// does (production bundles, then vsce, offline), then measures the bundles, the package, and the
// CPU time (user + sys, /usr/bin/time) of `node dist/cli.js --help` against an empty `node -e 0`,
// the median of RUNS each. Prints JSON {"webview_kb","extension_kb","cli_kb","help_cpu_ratio",
// "vsix_kb"} (targets: webview <= 250 KB, ratio <= 1.3, vsix <= 1 MB) with the load average
// beside them (the figures of a loaded machine are not the quiet ones).
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const RUNS = Number(process.env.BUNDLE_RUNS ?? 5);

function kb(bytes: number): number {
  return Math.round(bytes / 102.4) / 10;
}

/** Bytes of a file, or of every file under a folder. */
function bytesOf(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + bytesOf(join(path, name)), 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** CPU seconds (user + sys) of one run of node with `args`, as /usr/bin/time counts them. */
function cpuSeconds(args: readonly string[]): number {
  const run = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...args], { cwd: ROOT, encoding: 'utf8' });
  const match = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(run.stderr);
  if (run.status !== 0 || !match) throw new Error(`node ${args.join(' ')} failed: ${run.stderr}`);
  return Number(match[1]) + Number(match[2]);
}

function main(): void {
  execFileSync('npm', ['run', '--silent', 'package'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const help: number[] = [];
  const empty: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    help.push(cpuSeconds(['dist/cli.js', '--help']));
    empty.push(cpuSeconds(['-e', '0']));
  }
  const result = {
    webview_kb: kb(bytesOf(join(ROOT, 'dist/webview.js'))),
    extension_kb: kb(bytesOf(join(ROOT, 'dist/extension.js'))),
    cli_kb: kb(bytesOf(join(ROOT, 'dist/cli.js')) + bytesOf(join(ROOT, 'dist/cli'))),
    help_cpu_ratio: Math.round((median(help) / median(empty)) * 100) / 100,
    vsix_kb: kb(bytesOf(join(ROOT, 'dist/agent-checkpoints.vsix'))),
    help_cpu_s: median(help),
    empty_node_cpu_s: median(empty),
    load_average: loadavg().map((l) => Math.round(l * 100) / 100),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
