import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { isInside } from '../node/path-rules';
import { UsageError } from './args';

// The CLI's workspace trust: a headless tool has no dialog, so a folder is trusted only by the
// person: `--trust` for one invocation, or listed in a user-level file the workspace cannot name.
// Until then nothing runs in it: no git (its config can name commands), no model call, no tool.

const MAX_LIST_BYTES = 256 * 1024;

/** `$XDG_CONFIG_HOME/agent-checkpoints/trusted-workspaces` (else ~/.config/...): one absolute folder per line. */
export function trustListPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] !== undefined && env['XDG_CONFIG_HOME'] !== '' ? env['XDG_CONFIG_HOME'] : join(homedir(), '.config');
  return join(base, 'agent-checkpoints', 'trusted-workspaces');
}

function readList(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`${path} is not a regular file`);
    if (stat.size > MAX_LIST_BYTES) throw new UsageError(`${path} is larger than ${MAX_LIST_BYTES} bytes`);
    const buffer = Buffer.alloc(stat.size);
    return buffer.subarray(0, readSync(fd, buffer, 0, stat.size, 0)).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The folders the trust list names (real paths); a listed folder trusts the folders under it. */
export function trustedFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  return readList(trustListPath(env))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#') && isAbsolute(line))
    .map(realOrSelf);
}

/** Throws a UsageError unless the workspace is trusted by `--trust` or the trust list. */
export function requireTrustedWorkspace(dir: string, flag: boolean, env: NodeJS.ProcessEnv = process.env): void {
  if (flag) return;
  const real = realOrSelf(dir);
  if (trustedFolders(env).some((folder) => isInside(real, folder))) return;
  throw new UsageError(
    `workspace ${dir} is not trusted: the agent runs commands and writes files there, and git reads its configuration. ` +
      `Pass --trust to trust it for this run, or add the folder (an absolute path per line) to ${trustListPath(env)}`,
  );
}
