import { buildEnvironment } from '../command-env';

// How git runs for a commit (git_commit, git_revert): the repository's own configuration is
// untrusted, so every program it could name is switched off on the command line (which wins over
// every config file): hooks, the fsmonitor, signing and credential programs, automatic gc, and the
// repository's filter drivers. File contents are hashed as they are (--no-filters). What the person turned on in their USER (global) configuration is kept, with the
// value from that file, so a repository cannot redirect it.

/** What the person's global git configuration says, as far as a commit cares. */
export interface UserGitSettings {
  readonly name?: string;
  readonly email?: string;
  readonly hooksPath?: string;
  readonly fsmonitor?: string;
  readonly sign: boolean;
  readonly gpgProgram?: string;
  readonly gpgFormat?: string;
  readonly signingKey?: string;
}

/** The settings of a `git config --global --list -z` output (keys are lower case there). */
export function userSettingsOf(listing: string): UserGitSettings {
  const values = new Map<string, string>();
  for (const item of listing.split('\0')) {
    const at = item.indexOf('\n');
    if (at > 0) values.set(item.slice(0, at).toLowerCase(), item.slice(at + 1));
  }
  const truthy = (v: string | undefined) => v !== undefined && ['true', 'yes', 'on', '1'].includes(v.toLowerCase());
  const pick = (key: string) => values.get(key) ?? undefined;
  const settings: Record<string, unknown> = { sign: truthy(values.get('commit.gpgsign')) };
  const keys: [keyof UserGitSettings, string][] = [
    ['name', 'user.name'],
    ['email', 'user.email'],
    ['hooksPath', 'core.hookspath'],
    ['fsmonitor', 'core.fsmonitor'],
    ['gpgProgram', 'gpg.program'],
    ['gpgFormat', 'gpg.format'],
    ['signingKey', 'user.signingkey'],
  ];
  for (const [field, key] of keys) if (pick(key) !== undefined && pick(key) !== '') settings[field] = pick(key);
  return settings as unknown as UserGitSettings;
}

/**
 * The filter drivers a repository's own configuration defines, from `git config --show-scope -z
 * --get-regexp ^filter\.` (items "scope", "key\nvalue"): every scope but the person's global one.
 */
export function repositoryFilters(listing: string): string[] {
  const items = listing.split('\0');
  const names = new Set<string>();
  for (let i = 0; i + 1 < items.length; i += 2) {
    const key = items[i + 1]!.split('\n', 1)[0]!;
    const match = /^filter\.(.+)\.[^.]+$/i.exec(key);
    if (items[i] !== 'global' && match) names.add(match[1]!);
  }
  return [...names].sort();
}

/**
 * The `-c` options every git process of a commit gets (before the subcommand). `filters`: the
 * repository's own filter drivers, emptied (git still looks at a file through them when it writes
 * an index whose entries are as new as the index: an empty command is no filter).
 */
export function hardeningArgs(user: UserGitSettings, filters: readonly string[] = []): string[] {
  const fsmonitor = user.fsmonitor !== undefined && !['false', 'no', 'off', '0'].includes(user.fsmonitor.toLowerCase());
  const args = [
    '--literal-pathspecs',
    ...['-c', `core.hooksPath=${user.hooksPath ?? '/dev/null'}`],
    ...['-c', `core.fsmonitor=${fsmonitor ? user.fsmonitor! : 'false'}`],
    ...['-c', `commit.gpgSign=${user.sign ? 'true' : 'false'}`],
    ...['-c', 'credential.helper='],
    ...['-c', 'core.sshCommand=ssh'],
    ...['-c', 'gc.auto=0'],
    ...['-c', 'maintenance.auto=false'],
  ];
  for (const name of filters) for (const part of ['clean', 'smudge', 'process']) args.push('-c', `filter.${name}.${part}=`);
  for (const name of filters) args.push('-c', `filter.${name}.required=false`);
  if (user.sign) {
    args.push('-c', `gpg.program=${user.gpgProgram ?? 'gpg'}`, '-c', `gpg.format=${user.gpgFormat ?? 'openpgp'}`);
    if (user.signingKey !== undefined) args.push('-c', `user.signingKey=${user.signingKey}`);
  }
  return args;
}

/** commit-tree's own options: sign only when the person's user configuration asks for it. */
export function signingArgs(user: UserGitSettings): string[] {
  return user.sign ? ['-S'] : ['--no-gpg-sign'];
}

/**
 * The environment git runs with: built like a command's (credentials withheld, nothing of GIT_*
 * from outside), without a terminal to prompt on, without the system-wide configuration (only
 * the person's own and the repository's, whose programs are off), the author and committer set
 * from the person's user configuration (the repository's user.name cannot stand in for them).
 */
export function commitEnvironment(env: NodeJS.ProcessEnv, user: UserGitSettings): Record<string, string> {
  const built = buildEnvironment(env).env;
  return {
    ...built,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    LC_ALL: 'C',
    ...(user.name !== undefined ? { GIT_AUTHOR_NAME: user.name, GIT_COMMITTER_NAME: user.name } : {}),
    ...(user.email !== undefined ? { GIT_AUTHOR_EMAIL: user.email, GIT_COMMITTER_EMAIL: user.email } : {}),
  };
}

/** One argument as a shell would need it (for the command shown to the person). */
export function shellWord(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
