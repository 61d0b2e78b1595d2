import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { z } from 'zod';

// The API key must not sit in the CLI's start-up environment: a command the agent runs could read
// it from /proc/<cli pid>/environ, which shows the environment the process was started with. So a
// CLI started with the key re-executes itself without it and hands the key over on a pipe (fd 3);
// the re-executed CLI holds the key in memory only. The launcher keeps its end of the pipe open
// for as long as it lives, so the re-executed CLI learns at once when the launcher is killed
// (kill -9 included) and ends the same way: killing the CLI's pid always stops the run.
// The launcher itself must not stay the key's holder either: Node 20 has no exec (process.execve
// came in 22.15), so once the key is handed over it is deleted from process.env and its bytes in the
// launcher's start-up environment block (the memory /proc/<pid>/environ shows, env_start..env_end
// of /proc/self/stat) are overwritten through /proc/self/mem.

export const KEY_VARIABLES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'] as const;
export const KEY_FD_VARIABLE = 'AGENT_CHECKPOINTS_KEY_FD';
const KEY_FD = 3;
const HandedKeys = z.partialRecord(z.enum(KEY_VARIABLES), z.string());

let handed: Partial<Record<(typeof KEY_VARIABLES)[number], string>> = {};

/** A key handed over by the launcher, else undefined (never read from this process's environment). */
export function handedKey(name: (typeof KEY_VARIABLES)[number]): string | undefined {
  return handed[name];
}

/**
 * In a CLI started with a key in its environment: runs the CLI again without it, the keys written
 * to the child's fd 3, and resolves with the child's exit code. Undefined when there is no key.
 */
export function relaunchWithoutKeys(args: readonly string[], script: string): Promise<number> | undefined {
  const present = KEY_VARIABLES.filter((name) => (process.env[name] ?? '') !== '');
  if (present.length === 0 || process.env[KEY_FD_VARIABLE] !== undefined) return undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, [KEY_FD_VARIABLE]: String(KEY_FD) };
  for (const name of KEY_VARIABLES) delete env[name];
  const child = spawn(process.execPath, [...process.execArgv, script, ...args], { env, stdio: ['inherit', 'inherit', 'inherit', 'pipe'] });
  const pipe = child.stdio[KEY_FD] as NodeJS.WritableStream;
  pipe.write(`${JSON.stringify(Object.fromEntries(present.map((name) => [name, process.env[name]])))}\n`);
  for (const name of KEY_VARIABLES) delete process.env[name];
  scrubStartupEnvironment(KEY_VARIABLES);
  // Ctrl-C reaches the child through the terminal's process group; a signal sent to this pid only is passed on.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  return new Promise((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`error: could not start the CLI without the key in its environment: ${error.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      if (signal === null) return resolve(code ?? 1);
      // Killed: the launcher ends the same way, so whoever started the CLI sees the signal.
      process.removeAllListeners('SIGINT').removeAllListeners('SIGTERM');
      process.kill(process.pid, signal);
    });
  });
}

/** env_start and env_end of a /proc/<pid>/stat line (fields 50 and 51 of proc(5), counted after the command's name). */
export function environmentBounds(stat: string): { start: number; end: number } | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): field n is fields[n - 3].
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  return Number.isSafeInteger(start) && Number.isSafeInteger(end) && end > start ? { start, end } : undefined;
}

/**
 * Overwrites `NAME=value` of each named variable in this process's start-up environment block with
 * NUL bytes, so /proc/<this pid>/environ no longer shows them. Linux only; false when it could not.
 */
export function scrubStartupEnvironment(names: readonly string[]): boolean {
  if (process.platform !== 'linux') return false;
  let fd: number | undefined;
  try {
    const bounds = environmentBounds(readFileSync('/proc/self/stat', 'utf8'));
    if (bounds === undefined) return false;
    fd = openSync('/proc/self/mem', 'r+');
    const block = Buffer.alloc(bounds.end - bounds.start);
    readSync(fd, block, 0, block.length, bounds.start);
    let entry = 0;
    while (entry < block.length) {
      const end = block.indexOf(0, entry) < 0 ? block.length : block.indexOf(0, entry);
      const text = block.toString('latin1', entry, end);
      if (names.some((name) => text.startsWith(`${name}=`))) writeSync(fd, Buffer.alloc(end - entry), 0, end - entry, bounds.start + entry);
      entry = end + 1;
    }
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * In the re-executed CLI: reads the handed-over keys (one JSON line on fd 3), then watches the
 * pipe: its end means the launcher is gone, and this process is killed as the launcher was.
 */
export function receiveHandedKeys(): Promise<void> {
  const fd = process.env[KEY_FD_VARIABLE];
  if (fd === undefined) return Promise.resolve();
  delete process.env[KEY_FD_VARIABLE];
  if (fd !== String(KEY_FD)) return Promise.resolve();
  const pipe = new Socket({ fd: KEY_FD, readable: true, writable: false });
  const launcherGone = () => process.kill(process.pid, 'SIGKILL');
  pipe.on('end', launcherGone);
  pipe.on('error', launcherGone);
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      pipe.off('data', onData);
      let json: unknown = {};
      try {
        json = JSON.parse(text.slice(0, newline));
      } catch {
        // A malformed handover gives no key: the run then reports the missing key.
      }
      const parsed = HandedKeys.safeParse(json);
      if (parsed.success) handed = parsed.data;
      pipe.unref(); // watching for the launcher's end must not keep this process alive
      resolve();
    };
    pipe.on('data', onData);
  });
}
