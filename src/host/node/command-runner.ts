import { spawn } from 'node:child_process';
import type { CommandResult, CommandRunner } from '../../core/ports';

/** Keeps at most `limit` bytes of a stream; remembers whether anything was dropped. */
class BoundedOutput {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (room <= 0) {
      this.truncated ||= chunk.length > 0;
      return;
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.truncated = true;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** Kills the whole process group (the shell and what it started). */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

/** Variables that hold the agent's own credentials: a command the model asks for never sees them. */
export const WITHHELD_ENV = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'];

export function commandEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of WITHHELD_ENV) delete copy[name];
  return copy;
}

/**
 * Runs commands through the platform shell in a new process group, with the host environment
 * minus the agent's credentials (so `echo $ANTHROPIC_API_KEY` cannot put the key in a result).
 */
export function createNodeCommandRunner(options: { env?: NodeJS.ProcessEnv } = {}): CommandRunner {
  const env = commandEnvironment(options.env ?? process.env);
  return {
    run(command, { cwd, timeoutMs, maxOutputBytes, signal }) {
      const started = Date.now();
      return new Promise<CommandResult>((resolve, reject) => {
        if (signal?.aborted) return reject(new Error('command not started: cancelled'));
        const child = spawn(command, { cwd, env, shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        const half = Math.max(1, Math.floor(maxOutputBytes / 2));
        const stdout = new BoundedOutput(half);
        const stderr = new BoundedOutput(half);
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          killGroup(child.pid);
        }, timeoutMs);
        const onAbort = (): void => killGroup(child.pid);
        signal?.addEventListener('abort', onAbort, { once: true });
        child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
        child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
        child.once('error', (error) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        });
        child.once('close', (exitCode, exitSignal) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve({
            exitCode,
            signal: exitSignal,
            stdout: stdout.text(),
            stderr: stderr.text(),
            timedOut,
            truncated: stdout.truncated || stderr.truncated,
            durationMs: Date.now() - started,
          });
        });
      });
    },
  };
}
