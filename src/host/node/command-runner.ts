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

/** After SIGTERM, the group gets this long before SIGKILL. */
export const KILL_GRACE_MS = 1000;
/** After the shell exits, output still in the pipes is read for this long at most. */
export const DRAIN_MS = 200;

/** Sends a signal to the whole process group (the shell and what it started); false when the group is gone. */
function signalGroup(pid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Variables that hold the agent's own credentials: a command the model asks for never sees them. */
export const WITHHELD_ENV = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'];

/**
 * The environment of a command: the host's, without the credential variables and without any
 * variable whose value is one of the credentials (a copy under another name, or a key given in secrets).
 */
export function commandEnvironment(env: NodeJS.ProcessEnv, secrets: readonly string[] = []): NodeJS.ProcessEnv {
  const values = new Set([...secrets, ...WITHHELD_ENV.map((name) => env[name])].filter((v): v is string => v !== undefined && v !== ''));
  const copy: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (WITHHELD_ENV.includes(name) || (value !== undefined && values.has(value))) continue;
    copy[name] = value;
  }
  return copy;
}

/** What may outlive the command, for the result: descendants that kept the output open or stayed in its group. */
function stillRunningOf(pipesOpen: boolean, groupAlive: boolean, pid: number | undefined): string | undefined {
  const parts: string[] = [];
  if (groupAlive) parts.push(`processes of its process group (${pid}) are still running`);
  if (pipesOpen)
    parts.push(
      'a process it started (detached, e.g. with setsid or nohup) still holds its output open and may still be running; later output is not read',
    );
  return parts.length === 0 ? undefined : parts.join('; ');
}

interface RunOptions {
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal;
}

/**
 * Runs one command as its own process group. The call settles when the shell exits (plus a short
 * drain of the pipes), never later: at the timeout or on cancel the group gets SIGTERM, then
 * SIGKILL after KILL_GRACE_MS, and the result comes at most KILL_GRACE_MS + DRAIN_MS + a little later.
 */
function runOne(command: string, env: NodeJS.ProcessEnv, options: RunOptions): Promise<CommandResult> {
  const { cwd, timeoutMs, maxOutputBytes, signal } = options;
  const started = Date.now();
  return new Promise<CommandResult>((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('command not started: cancelled'));
    const child = spawn(command, { cwd, env, shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const half = Math.max(1, Math.floor(maxOutputBytes / 2));
    const stdout = new BoundedOutput(half);
    const stderr = new BoundedOutput(half);
    const open = new Set(['stdout', 'stderr']);
    let ended: 'timeout' | 'cancel' | null = null;
    let exit: { code: number | null; signal: string | null } | null = null;
    const timers: NodeJS.Timeout[] = [];
    const later = (ms: number, fn: () => void): void => void timers.push(setTimeout(fn, ms));
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      signal?.removeEventListener('abort', onAbort);
      // A timed-out or cancelled group is ended whole, even when the shell went first.
      if (ended !== null) signalGroup(child.pid, 'SIGKILL');
      const result: CommandResult = {
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut: ended === 'timeout',
        truncated: stdout.truncated || stderr.truncated,
        durationMs: Date.now() - started,
        ...(ended === 'cancel' ? { cancelled: true } : {}),
      };
      // A group just sent SIGKILL is ended; otherwise ask whether anything of it is left.
      const still = stillRunningOf(open.size > 0, ended === null && signalGroup(child.pid, 0), child.pid);
      child.stdout.destroy();
      child.stderr.destroy();
      child.unref();
      resolve(still === undefined ? result : { ...result, stillRunning: still });
    };
    const end = (why: 'timeout' | 'cancel'): void => {
      if (ended !== null || exit !== null) return;
      ended = why;
      signalGroup(child.pid, 'SIGTERM');
      later(KILL_GRACE_MS, () => signalGroup(child.pid, 'SIGKILL'));
      later(KILL_GRACE_MS + DRAIN_MS + 300, finish);
    };
    const onAbort = (): void => end('cancel');
    later(timeoutMs, () => end('timeout'));
    signal?.addEventListener('abort', onAbort, { once: true });
    const closed = (name: string) => (): void => {
      open.delete(name);
      if (exit !== null && open.size === 0) finish();
    };
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdout.once('end', closed('stdout'));
    child.stderr.once('end', closed('stderr'));
    child.once('error', (error) => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.once('exit', (code, exitSignal) => {
      exit = { code, signal: exitSignal };
      if (open.size === 0) finish();
      else later(DRAIN_MS, finish);
    });
  });
}

/**
 * Runs commands through the platform shell in a new process group, with the host environment
 * minus the agent's credentials (so `echo $ANTHROPIC_API_KEY` cannot put the key in a result).
 * `secrets` gives keys held elsewhere (VS Code's secret storage): variables with those values are withheld too.
 */
export function createNodeCommandRunner(options: { env?: NodeJS.ProcessEnv; secrets?: () => readonly string[] } = {}): CommandRunner {
  const base = options.env ?? process.env;
  return {
    run: (command, runOptions) => runOne(command, commandEnvironment(base, options.secrets?.() ?? []), runOptions),
  };
}
