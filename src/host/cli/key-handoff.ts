import { spawn } from 'node:child_process';
import { Socket } from 'node:net';
import { z } from 'zod';

// The API key must not sit in the CLI's start-up environment: a command the agent runs could read
// it from /proc/<cli pid>/environ, which shows the environment the process was started with. So a
// CLI started with the key re-executes itself without it and hands the key over on a pipe (fd 3);
// the re-executed CLI holds the key in memory only. The launcher keeps its end of the pipe open
// for as long as it lives, so the re-executed CLI learns at once when the launcher is killed
// (kill -9 included) and ends the same way: killing the CLI's pid always stops the run.

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
