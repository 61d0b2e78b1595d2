// bench:sandbox's figures of what a copy-on-write view costs beyond the walk: an npm-ci-sized
// ignored output (IGNORED_FILES files, IGNORED_MB in all, under node_modules) moved out of the upper
// folder into the workspace, and copy-up (one byte appended to a 1 GB file of real, non-sparse
// bytes: overlayfs copies the whole file up first). Each against the same command run plainly.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CommandRunner } from '../../src/core/ports';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { sandboxRequest } from '../../src/host/node/agent-host/commands';

const IGNORED_FILES = 20_000;
const IGNORED_MB = 200;
const BIG_MB = 1024;

function runners(ws: string, store: string): { plain: CommandRunner; sandboxed: CommandRunner } {
  return {
    plain: createNodeCommandRunner(),
    sandboxed: createNodeCommandRunner({
      sandbox: () => sandboxRequest({ sandbox: 'auto', network: 'on' }, { roots: [ws], store: { kind: 'files', dir: store } }),
    }),
  };
}

/** Bytes of the files under `dir` (what a view keeps on disk). */
function bytesUnder(dir: string): number {
  if (!existsSync(dir)) return 0;
  let sum = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) sum += statSync(join(entry.parentPath, entry.name)).size;
  return sum;
}

/** Runs `command`; for a sandboxed one, the MB its view still holds once the change set is placed (before it is discarded). */
async function timed(runner: CommandRunner, ws: string, views: string, command: string): Promise<{ ms: number; keptMb: number }> {
  const start = performance.now();
  const result = await runner.run(command, { cwd: ws, timeoutMs: 600_000, maxOutputBytes: 4096 });
  const ms = performance.now() - start;
  if (result.exitCode !== 0) throw new Error(`${command.slice(0, 80)} failed: ${result.stderr.slice(-1000)}`);
  const keptMb = bytesUnder(views) / 1048576;
  await result.changes?.discard();
  return { ms, keptMb };
}

const NPM_CI_LIKE = [
  'node -e "',
  "const fs=require('fs');const b=Buffer.alloc(" + Math.round((IGNORED_MB * 1048576) / IGNORED_FILES) + ',97);',
  `for(let i=0;i<${IGNORED_FILES};i++){const d='node_modules/pkg-'+(i%400)+'/lib';if(i<400)fs.mkdirSync(d,{recursive:true});fs.writeFileSync(d+'/f'+i+'.js',b);}`,
  '"',
].join('');

export interface ApplyFigures {
  readonly apply_ignored_ms: number;
  readonly apply_ignored_extra_mb: number;
  readonly npm_ci_like_ms_sandboxed: number;
  readonly npm_ci_like_ms_plain: number;
  readonly npm_ci_like: string;
  readonly copy_up_ms: number;
  readonly copy_up_extra_mb_during_command: number;
  readonly append_byte_ms_sandboxed: number;
  readonly append_byte_ms_plain: number;
  readonly copy_up_file: string;
}

/** The ignored output, plain then sandboxed (`rounds` times each): the medians' difference, and the MB the view held after placing. */
async function ignoredFigures(
  ws: string,
  store: string,
  rounds: number,
): Promise<Pick<ApplyFigures, 'apply_ignored_ms' | 'apply_ignored_extra_mb' | 'npm_ci_like_ms_sandboxed' | 'npm_ci_like_ms_plain'>> {
  const { plain, sandboxed } = runners(ws, store);
  const views = join(store, 'command-views');
  const plainMs: number[] = [];
  const sandboxedMs: number[] = [];
  let keptMb = 0;
  for (let r = 0; r < rounds; r++) {
    plainMs.push((await timed(plain, ws, views, NPM_CI_LIKE)).ms);
    rmSync(join(ws, 'node_modules'), { recursive: true, force: true });
    const hit = await timed(sandboxed, ws, views, NPM_CI_LIKE);
    if (statSync(join(ws, 'node_modules/pkg-7/lib/f7.js')).size === 0) throw new Error('the ignored output did not reach the workspace');
    sandboxedMs.push(hit.ms);
    keptMb = Math.max(keptMb, hit.keptMb);
    rmSync(join(ws, 'node_modules'), { recursive: true, force: true });
  }
  const p = median(plainMs);
  const s = median(sandboxedMs);
  return { apply_ignored_ms: round(s - p), apply_ignored_extra_mb: round(keptMb), npm_ci_like_ms_sandboxed: s, npm_ci_like_ms_plain: p };
}

/** Writes `mb` MB of real bytes (no holes: a sparse file would let copy-up skip them). */
function writeDense(path: string, mb: number): void {
  const chunk = Buffer.alloc(1048576, 120);
  const fd = openSync(path, 'w');
  try {
    for (let i = 0; i < mb; i++) writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
}

async function copyUpFigures(
  ws: string,
  store: string,
  rounds: number,
): Promise<
  Pick<
    ApplyFigures,
    'copy_up_ms' | 'copy_up_extra_mb_during_command' | 'append_byte_ms_sandboxed' | 'append_byte_ms_plain' | 'copy_up_file'
  >
> {
  const { plain, sandboxed } = runners(ws, store);
  const views = join(store, 'command-views');
  mkdirSync(join(ws, 'data'), { recursive: true });
  // An ignored file (*.log): a tracked one of 1 GB is past the bound of tracked bytes, and placed the same way.
  const big = join(ws, 'data', 'big.log');
  writeDense(big, BIG_MB);
  const plainMs: number[] = [];
  const sandboxedMs: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      plainMs.push((await timed(plain, ws, views, 'printf x >> data/big.log')).ms);
      sandboxedMs.push((await timed(sandboxed, ws, views, 'printf x >> data/big.log')).ms);
    }
    if (statSync(big).size !== BIG_MB * 1048576 + 2 * rounds) throw new Error('the appended bytes did not all reach the workspace');
  } finally {
    rmSync(join(ws, 'data'), { recursive: true, force: true });
  }
  const p = median(plainMs);
  const s = median(sandboxedMs);
  return {
    copy_up_ms: round(s - p),
    copy_up_extra_mb_during_command: BIG_MB,
    append_byte_ms_sandboxed: s,
    append_byte_ms_plain: p,
    copy_up_file: `${BIG_MB} MB of real bytes (not sparse), ignored (*.log), on the same file system as the store`,
  };
}

export async function applyFigures(ws: string, store: string, rounds: number): Promise<ApplyFigures> {
  return {
    ...(await ignoredFigures(ws, store, rounds)),
    npm_ci_like: `${IGNORED_FILES} files, ${IGNORED_MB} MB under node_modules (ignored)`,
    ...(await copyUpFigures(ws, store, rounds)),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.floor(sorted.length / 2)]!);
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
