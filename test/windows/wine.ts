// Node for Windows under Wine, as the Windows layer runs it: the cache setup-wine.sh fills, Linux
// paths as Windows sees them (the Z: drive), and a process whose standard output goes to a file
// (Wine's Node cannot write to a pipe).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO = resolve(__dirname, '..', '..');
export const WINE = '/usr/lib/wine/wine64';

export interface WineNode {
  /** node.exe's Linux path. */
  readonly node: string;
  readonly env: NodeJS.ProcessEnv;
}

/** Installs (when missing) and returns Node for Windows; a string says why it cannot be had here. */
export function setupWine(): WineNode | string {
  const r = spawnSync('bash', [join(REPO, 'test/windows/setup-wine.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status === 3) return r.stderr.trim().split('\n').pop() ?? 'wine64 is missing';
  if (r.status !== 0) throw new Error(`setup-wine.sh failed (${r.status}):\n${r.stderr}`);
  const dir = r.stdout.trim().split('\n').pop()!;
  const bin = join(dir, 'package', 'bin');
  return {
    node: join(bin, 'node.exe'),
    env: {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      WINEPREFIX: join(dir, 'prefix'),
      WINEDEBUG: '-all',
      // Windows' PATH inside Wine: node.exe for the commands a run starts.
      WINEPATH: winPath(bin),
    },
  };
}

/** A Linux path as Windows programs under Wine see it. */
export function winPath(linux: string): string {
  return `Z:${resolve(linux).replace(/\//g, '\\')}`;
}

export interface WineResult {
  readonly code: number | null;
  readonly output: string;
}

/** Starts node.exe with `args`; its output (stdout and stderr) is read from a file once it ends. */
export function startWineNode(
  wine: WineNode,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): { proc: ChildProcess; done: Promise<WineResult>; outputNow(): string } {
  const dir = mkdtempSync(join(tmpdir(), 'wine-out-'));
  const file = join(dir, 'out.txt');
  const quoted = [wine.node, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const proc = spawn('bash', ['-c', `exec ${WINE} ${quoted} > '${file}' 2>&1`], {
    cwd: options.cwd ?? REPO,
    env: { ...wine.env, ...options.env },
    stdio: 'ignore',
  });
  const outputNow = (): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  const done = new Promise<WineResult>((settle) =>
    proc.on('close', (code) => {
      const output = outputNow();
      rmSync(dir, { recursive: true, force: true });
      settle({ code, output });
    }),
  );
  return { proc, done, outputNow };
}

export function wineNode(
  wine: WineNode,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<WineResult> {
  return startWineNode(wine, args, options).done;
}
