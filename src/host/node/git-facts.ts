import { execFile } from 'node:child_process';
import type { GitReader } from '../../core/ports';
import type { GitFacts } from '../../core/store/records';

// Read-only git: only rev-parse and status. Never a command that writes (no commit, reset,
// clean, stash, checkout, add). `--no-optional-locks` keeps status from refreshing the index.
const READ_ONLY_ENV = { GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };

function git(root: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['--no-optional-locks', '-C', root, ...args],
      { env: { ...process.env, ...READ_ONLY_ENV }, maxBuffer: 64 * 1024 * 1024, timeout: 15_000 },
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
