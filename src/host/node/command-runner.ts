import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { CommandResult, CommandRunner } from '../../core/ports';
import { errorText } from '../../core/error-text';
import { shellLaunch, shellOf, type Shell, type ShellLaunch } from './shell';
import {
  detectSandbox,
  noViewAfter,
  noViewReason,
  noViewResult,
  recoverChanges,
  refusedResult,
  SandboxRefusal,
  sandboxedLaunch,
  sweepViews,
  type SandboxedLaunch,
  type SandboxRequest,
} from './sandbox/index';
import { scanChanges, scanFolders, type ScanGuard } from './sandbox/scan';
import { buildEnvironment, WithheldNames } from './command-env';
import { decodeCommandOutput } from './command-output';
import { nodeProcessControl, ProcessTree, type ProcessControl } from './process-tree';

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

  text(platform: NodeJS.Platform): string {
    return decodeCommandOutput(Buffer.concat(this.chunks), platform);
  }
}

/** After SIGTERM, the group gets this long before SIGKILL. */
export const KILL_GRACE_MS = 1000;
/** After the shell exits, output still in the pipes is read for this long at most. */
export const DRAIN_MS = 200;

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
  readonly processes: ProcessControl;
  readonly hostEnv: NodeJS.ProcessEnv;
}

type Ending = 'timeout' | 'cancel';

/**
 * One command running as its own process group. It settles when the shell exits (plus a short
 * drain of the pipes), never later: at the timeout or on cancel the group gets SIGTERM, then
 * SIGKILL after KILL_GRACE_MS (on Windows the tree is ended by taskkill: process-tree.ts), and
 * the result comes at most KILL_GRACE_MS + DRAIN_MS + 300 ms later.
 */
class CommandRun {
  private readonly started = Date.now();
  private readonly stdout: BoundedOutput;
  private readonly stderr: BoundedOutput;
  private readonly open = new Set(['stdout', 'stderr']);
  private readonly timers: NodeJS.Timeout[] = [];
  private ended: Ending | null = null;
  private exit: { code: number | null; signal: string | null } | null = null;
  private settled = false;
  private readonly onAbort = (): void => this.end('cancel');

  constructor(
    private readonly child: ChildProcessByStdio<null, Readable, Readable>,
    private readonly options: RunOptions,
    private readonly tree: ProcessTree,
    private readonly resolve: (result: CommandResult) => void,
    private readonly reject: (error: Error) => void,
  ) {
    const half = Math.max(1, Math.floor(options.maxOutputBytes / 2));
    this.stdout = new BoundedOutput(half);
    this.stderr = new BoundedOutput(half);
    this.later(options.timeoutMs, () => this.end('timeout'));
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => this.stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    child.stdout.once('end', () => this.closed('stdout'));
    child.stderr.once('end', () => this.closed('stderr'));
    child.once('error', (error) => this.settle() && reject(error));
    child.once('exit', (code, signal) => {
      this.exit = { code, signal };
      if (this.open.size === 0) this.finish();
      else this.later(DRAIN_MS, () => this.finish());
    });
  }

  private later(ms: number, fn: () => void): void {
    this.timers.push(setTimeout(fn, ms));
  }

  /** True the first time: the call settles once. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.timers.forEach(clearTimeout);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    return true;
  }

  private closed(name: string): void {
    this.open.delete(name);
    if (this.exit !== null && this.open.size === 0) this.finish();
  }

  private end(why: Ending): void {
    if (this.ended !== null || this.exit !== null) return;
    this.ended = why;
    this.tree.end('SIGTERM');
    this.later(KILL_GRACE_MS, () => this.tree.end('SIGKILL'));
    this.later(KILL_GRACE_MS + DRAIN_MS + 300, () => this.finish());
  }

  private finish(): void {
    if (!this.settle()) return;
    const { child, ended, exit } = this;
    // A timed-out or cancelled group is ended whole, even when the shell went first.
    if (ended !== null) this.tree.end('SIGKILL');
    const platform = this.options.processes.platform;
    const result: CommandResult = {
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stdout: this.stdout.text(platform),
      stderr: this.stderr.text(platform),
      timedOut: ended === 'timeout',
      truncated: this.stdout.truncated || this.stderr.truncated,
      durationMs: Date.now() - this.started,
      ...(ended === 'cancel' ? { cancelled: true } : {}),
    };
    // A group just sent SIGKILL is ended; otherwise ask whether anything of it is left.
    const still = stillRunningOf(this.open.size > 0, ended === null && this.tree.alive(), child.pid);
    child.stdout.destroy();
    child.stderr.destroy();
    child.unref();
    this.resolve(still === undefined ? result : { ...result, stillRunning: still });
  }
}

function runOne(
  command: string,
  env: NodeJS.ProcessEnv,
  options: RunOptions,
  shell: Shell,
  launch?: SandboxedLaunch,
): Promise<CommandResult> {
  return new Promise<CommandResult>((resolve, rejectRun) => {
    // A command that never ran (cancelled first, or its program failed to start) drops its view too.
    const reject = (error: Error): void => {
      launch?.release();
      rejectRun(error);
    };
    if (options.signal?.aborted) return reject(new Error('command not started: cancelled'));
    const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
    const child =
      launch !== undefined
        ? spawn(launch.file, [...launch.args], { cwd: options.cwd, env, detached: true, stdio })
        : spawnInShell(shellLaunch(shell, command), options.cwd, env, stdio);
    // taskkill's place is found in the host's environment (the command's is built: command-env.ts).
    const tree = new ProcessTree(options.processes, child.pid, options.hostEnv);
    const finish = (result: CommandResult): void => void launch!.finish(result).then(resolve, rejectRun);
    new CommandRun(child, options, tree, launch !== undefined ? finish : resolve, reject);
  });
}

/** A command in its shell, in a new process group (Windows: its own console-less process tree). */
function spawnInShell(launch: ShellLaunch, cwd: string, env: NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe']) {
  return spawn(launch.file, [...launch.args], {
    cwd,
    env,
    detached: true,
    stdio,
    windowsHide: true,
    windowsVerbatimArguments: launch.windowsVerbatimArguments,
  });
}

export interface RunnerOptions {
  env?: NodeJS.ProcessEnv;
  /** The shell of unsandboxed commands, read at each command (default: the platform's, shellOf). */
  shell?: () => Shell;
  secrets?: () => readonly string[];
  /** Names and patterns of host variables the person lets commands have (read at each command). */
  passEnv?: () => readonly string[];
  /** The sandbox for the next command (read at each command); undefined: the person switched it off. */
  sandbox?: () => SandboxRequest | undefined;
  /** Told once when commands run unsandboxed because the platform has no sandbox. */
  warn?: (message: string) => void;
  /** How a process tree is ended and output decoded: this platform's by default (process-tree.ts). */
  processes?: ProcessControl;
}

/** Said in the result of a command that ran without a sandbox, and why. */
const UNSANDBOXED = (why: string): string =>
  `This command ran WITHOUT a sandbox (${why}): it could read and change anything your user can.`;

/** What one command runs in: its sandboxed launch, or why there is none; and why it has no copy-on-write view (then its changes are scanned). */
interface Decision {
  readonly launch: SandboxedLaunch | string | undefined;
  readonly scan?: { readonly why: string; readonly roots: readonly string[]; readonly guard: ScanGuard };
}

/** Per runner: the warning told, and why views failed to mount here (later commands go without one). */
interface RunnerState {
  warned: boolean;
  noView?: string;
}

/**
 * The sandboxed launch of a command, or why there is none (the person switched it off, or the
 * platform has none: also warned once). Nothing at all when the host asked for no sandbox decision.
 */
function decide(options: RunnerOptions, state: RunnerState, command: string, cwd: string, callId?: string): Decision {
  if (options.sandbox === undefined) return { launch: undefined };
  const request = options.sandbox();
  if (request === undefined) return { launch: UNSANDBOXED('the sandbox is switched off: agentCheckpoints.sandbox or --no-sandbox') };
  const env = options.env ?? process.env;
  const kind = detectSandbox(env);
  if (kind.kind === 'none' && !state.warned) {
    state.warned = true;
    options.warn?.(
      `commands run WITHOUT a sandbox: ${kind.reason}. They can reach everything your user can (switch the warning off with agentCheckpoints.sandbox: off or --no-sandbox).`,
    );
  }
  const why = state.noView ?? noViewReason(kind, request, env);
  const launch =
    sandboxedLaunch(kind, request, cwd, command, why === undefined, callId) ??
    UNSANDBOXED(kind.kind === 'none' ? kind.reason : 'none here');
  const guard: ScanGuard = { extra: request.protectedPaths, quarantine: request.views ?? join(tmpdir(), 'agent-checkpoints-blocked') };
  return { launch, ...(why !== undefined ? { scan: { why, roots: request.roots, guard } } : {}) };
}

/** After a host was killed mid-command, the views it left go at the next start. */
function sweepSoon(options: RunnerOptions): void {
  if (options.sandbox === undefined) return;
  setImmediate(() => {
    try {
      const views = options.sandbox?.()?.views;
      if (views !== undefined) sweepViews(views);
    } catch (error) {
      options.warn?.(`could not sweep the views of earlier commands: ${errorText(error)}`);
    }
  });
}

/**
 * Runs commands through the platform shell in a new process group (inside the platform's sandbox
 * when `sandbox` asks for one: sandbox/), with an environment built by command-env.ts: a base set
 * plus what `passEnv` allows, never the agent's key (so `echo $ANTHROPIC_API_KEY` cannot put it in a
 * result). `secrets` gives keys held elsewhere (VS Code's secret storage): variables with those
 * values are withheld too. The first result that withholds a name not told before lists it.
 */
export function createNodeCommandRunner(options: RunnerOptions = {}): CommandRunner {
  const base = options.env ?? process.env;
  const state: RunnerState = { warned: false };
  const shell = options.shell ?? (() => shellOf(process.platform, base));
  sweepSoon(options);
  const withheld = new WithheldNames();
  const processes = options.processes ?? nodeProcessControl();
  const once = async (command: string, runOptions: Parameters<CommandRunner['run']>[1], env: NodeJS.ProcessEnv): Promise<CommandResult> => {
    const decision = decide(options, state, command, runOptions.cwd, runOptions.callId);
    const { launch } = decision;
    const { scan } = decision;
    const before = scan !== undefined ? await scanFolders(scan.roots, scan.guard.extra) : undefined;
    const run = { ...runOptions, processes, hostEnv: base };
    const result =
      typeof launch !== 'string'
        ? await runOne(command, launch !== undefined ? { ...env, ...launch.env } : env, run, shell(), launch)
        : { ...(await runOne(command, env, run, shell())), sandboxNote: launch };
    if (before === undefined || scan === undefined) return result;
    const after = await scanFolders(scan.roots, scan.guard.extra);
    return { ...result, changes: await scanChanges(before, after, scan.why, scan.roots, scan.guard) };
  };
  return {
    async run(command, runOptions) {
      const built = buildEnvironment(base, { allowed: options.passEnv?.() ?? [], secrets: options.secrets?.() ?? [] });
      const note = withheld.note(built);
      let result: CommandResult;
      try {
        result = await once(command, runOptions, built.env);
        // The view could not be mounted (a file system that refuses to be a layer): the command did not run; it runs once more, scanned.
        if (noViewResult(result) && state.noView === undefined) {
          state.noView = `the workspace folder cannot be an overlay layer here: ${result.stderr.trim().split('\n').pop()}`;
          result = await once(command, runOptions, built.env);
        }
        // A file of another owner could not be copied up (EOVERFLOW): the commands after this one go without a view.
        state.noView ??= noViewAfter(result);
      } catch (error) {
        if (error instanceof SandboxRefusal) return refusedResult(error);
        throw error;
      }
      return note === undefined ? result : { ...result, environmentNote: note };
    },
    async recover(callId) {
      const request = options.sandbox?.();
      return request !== undefined ? recoverChanges(request, callId) : undefined;
    },
  };
}
