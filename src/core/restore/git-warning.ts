import type { GitFacts } from '../store/records';

/** A warning when HEAD moved (or the repository appeared/vanished) between run start and now. */
export function headMovedWarning(atStart: GitFacts, now: GitFacts): string | undefined {
  if (atStart.isRepo !== now.isRepo)
    return `the workspace ${now.isRepo ? 'became' : 'is no longer'} a git repository since the run started`;
  if (!atStart.isRepo || atStart.head === now.head) return undefined;
  const from = atStart.head?.slice(0, 12) ?? 'no commit';
  const to = now.head?.slice(0, 12) ?? 'no commit';
  const branch = atStart.branch !== now.branch ? ` (branch ${atStart.branch ?? '?'} -> ${now.branch ?? '?'})` : '';
  return `git HEAD moved since the run started: ${from} -> ${to}${branch}; files may differ from what the agent saw, review the plan before restoring`;
}
