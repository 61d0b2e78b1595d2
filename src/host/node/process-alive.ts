import { readFileSync } from 'node:fs';

// Whether a process is alive, as the lease and the command views both ask it: a zombie (exited,
// waiting to be reaped, as an orphan is where PID 1 does not reap) is not alive.

/** True when /proc says the process has exited and waits to be reaped (a zombie is not a live holder). */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

/** True while the process exists and has not exited (EPERM: it exists, owned by someone else). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return process.platform !== 'linux' || !isZombie(pid);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as { code?: string }).code === 'EPERM';
  }
}
