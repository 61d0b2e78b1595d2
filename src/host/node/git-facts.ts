import { execFile } from 'node:child_process';
import type { GitReader } from '../../core/ports';
import type { GitFacts } from '../../core/store/records';

// Read-only git: only rev-parse and status. Never a command that writes (no commit, reset,
// clean, stash, checkout, add). The repository's own config is untrusted: fsmonitor (a command
// git would run) and hooks are off, optional locks are off (status does not refresh the index),
// and git gets a scrubbed environment: no API key, no GIT_* from outside that could redirect it.
const HARDENING = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '--no-optional-locks'];
const PASSED_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'TMPDIR', 'XDG_CONFIG_HOME', 'SYSTEMROOT', 'SystemRoot', 'WINDIR'];

/** The environment git runs with: a few variables it needs, nothing else from the host. */
export function gitEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const scrubbed: NodeJS.ProcessEnv = { GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  for (const name of PASSED_ENV) if (env[name] !== undefined) scrubbed[name] = env[name];
  return scrubbed;
}

function git(root: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      'git',
      [...HARDENING, '-C', root, ...args],
      { env: gitEnvironment(), maxBuffer: 64 * 1024 * 1024, timeout: 15_000 },
      (error, stdout) => {
        resolve(error ? null : stdout);
      },
    );
  });
}

/** Paths from `git status --porcelain -z` (renames give the new path). */
export function parsePorcelain(output: string): string[] {
  const fields = output.split('\0');
  const paths: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.length < 4) continue;
    const status = field.slice(0, 2);
    paths.push(field.slice(3));
    if (status.includes('R') || status.includes('C')) i++;
  }
  return paths;
}

/** Repository, HEAD, branch and dirty paths of a folder (isRepo false outside a repository). */
export async function readGitFacts(root: string): Promise<GitFacts> {
  const inside = await git(root, ['rev-parse', '--is-inside-work-tree']);
  if (inside?.trim() !== 'true') return { isRepo: false, dirtyPaths: [] };
  const [head, branch, status] = await Promise.all([
    git(root, ['rev-parse', '--verify', '--quiet', 'HEAD']),
    git(root, ['rev-parse', '--abbrev-ref', 'HEAD']),
    git(root, ['status', '--porcelain', '-z', '--untracked-files=all']),
  ]);
  const facts: GitFacts = { isRepo: true, dirtyPaths: status === null ? [] : parsePorcelain(status) };
  if (head?.trim()) facts.head = head.trim();
  const branchName = branch?.trim();
  if (branchName && branchName !== 'HEAD') facts.branch = branchName;
  return facts;
}

export const nodeGitReader: GitReader = { facts: readGitFacts };
export { headMovedWarning } from '../../core/restore/git-warning';
