// The headless CLI as a test runs it: bundled from src/host/cli/bin.ts (its entry), then started
// as a child process with a given environment (nothing of the test's own leaks in).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';

const REPO = resolve(__dirname, '..', '..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Bundles the CLI into `dir/cli.js`; returns its path. */
export async function bundleCli(dir: string): Promise<string> {
  const outfile = join(dir, 'cli.js');
  await esbuild.build({
    entryPoints: [join(REPO, 'src/host/cli/bin.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    mainFields: ['module', 'main'],
    logLevel: 'error',
  });
  return outfile;
}

let shared: Promise<string> | undefined;

/**
 * The CLI bundled once per process and shared by every suite that starts it (test/system/hooks.ts
 * builds it before the system layer's first suite); removed when the process exits.
 */
export function sharedCli(): Promise<string> {
  shared ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ac-cli-bundle-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return bundleCli(dir);
  })();
  return shared;
}

/** Starts the CLI with exactly `env`; `done` settles once its output is closed. */
export function startCli(
  bundle: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): { proc: ChildProcess; done: Promise<CliResult> } {
  const proc = spawn(process.execPath, [bundle, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((settle) => proc.on('close', (code) => settle({ code, stdout, stderr })));
  return { proc, done };
}
