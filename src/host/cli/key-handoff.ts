import { spawn } from 'node:child_process';
import { readSync } from 'node:fs';
import { Socket } from 'node:net';
import { z } from 'zod';

// The API key must not sit in the CLI's start-up environment: a command the agent runs could read
// it from /proc/<cli pid>/environ, which shows the environment the process was started with. So a
// CLI started with the key re-executes itself without it and hands the key over on a pipe (fd 3);
// the re-executed CLI holds the key in memory only. The pipe stays open while the launcher lives:
// when it ends (even by kill -9) the CLI ends with it, as if it had been killed itself.

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
  // Ctrl-C reaches the child through the terminal's process group; a signal sent to this pid only is passed on.
  const ignoreInterrupt = (): void => undefined;
  const passTerminate = (): void => void child.kill('SIGTERM');
  process.on('SIGINT', ignoreInterrupt);
  process.on('SIGTERM', passTerminate);
  return new Promise((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`error: could not start the CLI without the key in its environment: ${error.message}\n`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      if (signal === null) return resolve(code ?? 1);
      // Ended by a signal: end the same way, so that whoever started the CLI sees what happened.
      process.off('SIGINT', ignoreInterrupt);
      process.off('SIGTERM', passTerminate);
      process.kill(process.pid, signal);
    });
  });
}

/** One line from fd, read synchronously (the launcher writes it before anything else happens). */
function readLine(fd: number): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(4096);
  for (;;) {
    let read: number;
    try {
      read = readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      throw error;
    }
    if (read === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, read)));
    if (buffer.subarray(0, read).includes(10)) break;
  }
  return Buffer.concat(chunks).toString('utf8').split('\n', 1)[0] ?? '';
}

/** In the re-executed CLI: reads the handed-over keys from fd 3, then ends with the launcher. */
export function receiveHandedKeys(): void {
  const fd = process.env[KEY_FD_VARIABLE];
  if (fd === undefined) return;
  delete process.env[KEY_FD_VARIABLE];
  if (fd !== String(KEY_FD)) return;
  const line = readLine(KEY_FD);
  const parsed = HandedKeys.safeParse(JSON.parse(line === '' ? '{}' : line));
  if (parsed.success) handed = parsed.data;
  const launcher = new Socket({ fd: KEY_FD, readable: true, writable: false });
  launcher.on('close', () => process.kill(process.pid, 'SIGKILL'));
  launcher.on('error', () => undefined);
  launcher.resume();
  launcher.unref();
}
