import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

// Placeholders for missing protected paths are shared by every sandboxed command of a workspace
// folder, in this process and in others (a window's agent, CLI runs, workers): a command registers
// a hold before it plans, and only the last hold out removes them. Without it one command's cleanup
// removed a placeholder another's bubblewrap was binding, and that command failed to start (or, once
// started, lost the read-only mount). A hold whose process died is swept by the next release, which
// then removes what that process left behind.

const PlaceholderSchema = z.object({ path: z.string(), dir: z.boolean(), ino: z.number() });
const RegistrySchema = z.array(PlaceholderSchema);
export type Placeholder = z.infer<typeof PlaceholderSchema>;

/** One command's claim on a workspace folder's placeholders. */
export interface Hold {
  readonly root: string;
  readonly file: string;
}

const LOCK_WAIT_MS = 10_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** The folder of a workspace folder's holds: private to this user, outside every workspace. */
function holdsDir(root: string): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const base = join(tmpdir(), `agent-checkpoints-sandbox-${uid}`);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const st = lstatSync(base);
  if (!st.isDirectory() || (typeof process.getuid === 'function' && st.uid !== uid) || (st.mode & 0o077) !== 0)
    throw new Error(`${base} is not a private folder of this user: the sandbox will not keep its bookkeeping there`);
  const dir = join(base, createHash('sha256').update(root).digest('hex').slice(0, 32));
  mkdirSync(join(dir, 'holds'), { recursive: true, mode: 0o700 });
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock whose process is gone (or, not yet naming one, older than a few seconds: its maker died in between). */
function staleLock(path: string): boolean {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    if (Number.isSafeInteger(pid) && pid > 0) return pid === process.pid || !alive(pid); // ours: a lock is never taken twice in one (synchronous) process
    return Date.now() - statSync(path).mtimeMs > 5000;
  } catch {
    return false; // gone meanwhile: try again
  }
}

/** Runs `work` under the folder's lock (a file made exclusively; a dead holder's lock is taken over). */
function withLock<T>(dir: string, work: () => T): T {
  const path = join(dir, 'lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (staleLock(path)) unlinkQuietly(path);
      else if (Date.now() > deadline)
        throw new Error(`the sandbox's lock ${path} stayed taken for ${LOCK_WAIT_MS / 1000} s`, { cause: error });
      else Atomics.wait(sleeper, 0, 0, 2);
    }
  }
  try {
    return work();
  } finally {
    unlinkQuietly(path);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

function readRegistry(dir: string): Placeholder[] {
  try {
    const parsed = RegistrySchema.safeParse(JSON.parse(readFileSync(join(dir, 'placeholders.json'), 'utf8')));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

function writeRegistry(dir: string, list: readonly Placeholder[]): void {
  const path = join(dir, 'placeholders.json');
  if (list.length === 0) return unlinkQuietly(path);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(list), { mode: 0o600 });
  renameSync(temp, path);
}

let counter = 0;

/**
 * Registers a hold on `root` and, under the lock, runs `makePlaceholders` (which makes the missing
 * protected paths and returns what it made): those join the folder's shared list.
 */
export function takeHold(root: string, makePlaceholders: () => Placeholder[]): Hold {
  const dir = holdsDir(root);
  return withLock(dir, () => {
    const file = join(dir, 'holds', `${process.pid}-${++counter}-${randomBytes(4).toString('hex')}`);
    writeFileSync(file, '', { mode: 0o600 });
    try {
      const made = makePlaceholders();
      if (made.length > 0) writeRegistry(dir, [...readRegistry(dir), ...made]);
    } catch (error) {
      unlinkQuietly(file);
      throw error;
    }
    return { root, file };
  });
}

/** Ends a hold; the last one out (holds of dead processes swept) removes the shared placeholders. */
export function releaseHold(hold: Hold): void {
  const dir = holdsDir(hold.root);
  withLock(dir, () => {
    unlinkQuietly(hold.file);
    const others = readdirSync(join(dir, 'holds')).filter((name) => {
      const pid = Number.parseInt(name, 10);
      if (Number.isSafeInteger(pid) && alive(pid)) return true;
      unlinkQuietly(join(dir, 'holds', name));
      return false;
    });
    if (others.length > 0) return;
    const kept = readRegistry(dir).filter((p) => !removePlaceholder(p));
    writeRegistry(dir, kept);
  });
}

/** Removes a placeholder when it is still the empty one made; true when it is gone (or no longer ours to keep). */
function removePlaceholder(p: Placeholder): boolean {
  try {
    const st = lstatSync(p.path);
    if (st.ino !== p.ino) return true; // replaced: not ours any more
    if (p.dir) rmdirSync(p.path);
    else if (st.size === 0) unlinkSync(p.path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTEMPTY' || code === 'EEXIST';
  }
}

/** Makes an empty placeholder (a folder, or a read-only file); throws EEXIST when the path was made meanwhile. */
export function makePlaceholder(path: string, dir: boolean): Placeholder {
  if (dir) mkdirSync(path);
  else closeSync(openSync(path, 'wx', 0o444));
  return { path, dir, ino: statSync(path).ino };
}

/** Removes what dead processes left in a workspace folder (placeholders of a host killed mid-command), unless a live command still holds them. */
export function sweepLeftovers(root: string): void {
  releaseHold(takeHold(root, () => []));
}
