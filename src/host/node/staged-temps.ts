import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { isAlive } from './process-alive';

// A write into the workspace stages its bytes in a temp file beside the target, then renames it
// over the target. A host killed between the two leaves the temp file in the person's folder. Its
// name carries the writing process (`.ac-p` + pid in base 36 + random + `.tmp`, the store's fixed
// length), so the next write into that folder by any host removes the ones whose process is gone:
// a crash leaves nothing there once the interrupted change is settled (which writes that folder).

const PID_WIDTH = 5;
const STAGED = /^\.ac-p([0-9a-z]{5})[0-9a-f]{8}\.tmp$/;

/** The temp file name of a workspace write by this process. */
export function stagedTempName(pid = process.pid): string {
  const random = globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 8);
  return `.ac-p${pid.toString(36).padStart(PID_WIDTH, '0').slice(-PID_WIDTH)}${random}.tmp`;
}

/** The pid a staged temp file's name carries, or undefined when the name is not one. */
export function stagedTempPid(name: string): number | undefined {
  const pid = STAGED.exec(name)?.[1];
  return pid === undefined ? undefined : parseInt(pid, 36);
}

/**
 * Removes the staged temp files in `dir` whose process is gone; returns their names. A folder that
 * cannot be read, or a file another user owns, is left as it is.
 */
export async function sweepStagedTemps(dir: string, alive: (pid: number) => boolean = isAlive): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = stagedTempPid(name);
    if (pid === undefined || pid === process.pid || alive(pid)) continue;
    try {
      await fs.unlink(nodePath.join(dir, name));
      removed.push(name);
    } catch {
      // gone already, or not ours to remove
    }
  }
  return removed;
}
