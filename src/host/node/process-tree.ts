import { spawn } from 'node:child_process';

// Ending a command's whole process tree, the platform's way. POSIX: the command runs as its own
// process group, which gets SIGTERM, then SIGKILL (`kill(-pid)`). Windows has no process groups
// a signal reaches: `taskkill /pid N /T /F` ends the shell and every process it started, at once
// and by force; it is started, never awaited (and itself ended if it hangs). The platform and the
// calls are injectable, so tests on Linux prove the Windows branch.

export interface ProcessControl {
  readonly platform: NodeJS.Platform;
  /** process.kill: throws ESRCH when nothing has that pid, EPERM when it is someone else's. */
  kill(pid: number, signal: NodeJS.Signals | 0): void;
  /** Starts a helper program and lets it run on its own (errors ignored). */
  start(file: string, args: readonly string[]): void;
}

/** A helper still running after this long is ended: a tree's end never waits on it. */
export const HELPER_LIMIT_MS = 10_000;

function startDetachedHelper(file: string, args: readonly string[]): void {
  const helper = spawn(file, [...args], { stdio: 'ignore', windowsHide: true });
  helper.on('error', () => undefined);
  const limit = setTimeout(() => helper.kill(), HELPER_LIMIT_MS);
  limit.unref();
  helper.once('exit', () => clearTimeout(limit));
  helper.unref();
}

export function nodeProcessControl(platform: NodeJS.Platform = process.platform): ProcessControl {
  return { platform, kill: (pid, signal) => process.kill(pid, signal), start: startDetachedHelper };
}

/** taskkill from the Windows folder when the environment names it, else from PATH. */
export function taskkillPath(env: NodeJS.ProcessEnv = process.env): string {
  const root = env['SystemRoot'] ?? env['SYSTEMROOT'];
  return root === undefined ? 'taskkill' : `${root}\\System32\\taskkill.exe`;
}

/** The process tree of one command, ended the platform's way. */
export class ProcessTree {
  private taskkilled = false;

  constructor(
    private readonly control: ProcessControl,
    private readonly pid: number | undefined,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /**
   * POSIX: the signal to the whole group. Windows: `taskkill /T /F` once (there is no gentler
   * ending a console program answers; a second would find nothing of the tree it ended).
   */
  end(signal: 'SIGTERM' | 'SIGKILL'): void {
    if (this.pid === undefined) return;
    if (this.control.platform === 'win32') {
      if (this.taskkilled) return;
      this.taskkilled = true;
      this.control.start(taskkillPath(this.env), ['/pid', String(this.pid), '/T', '/F']);
      return;
    }
    this.signalGroup(signal);
  }

  /** Whether anything of the tree is left: POSIX, the group; Windows, the shell itself (a tree cannot be asked). */
  alive(): boolean {
    if (this.pid === undefined) return false;
    if (this.control.platform === 'win32') return this.signal(this.pid, 0);
    return this.signalGroup(0);
  }

  private signalGroup(signal: NodeJS.Signals | 0): boolean {
    return this.signal(-this.pid!, signal);
  }

  /** False when nothing has that pid any more. */
  private signal(pid: number, signal: NodeJS.Signals | 0): boolean {
    try {
      this.control.kill(pid, signal);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
}
