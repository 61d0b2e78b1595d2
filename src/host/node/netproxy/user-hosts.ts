import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseHostRule, ruleOfUrl, type HostRule } from './policy';

// The hosts the person's own user-level configuration already names, read at a run's start: the
// registries of ~/.npmrc, pip's user config, and the URLs of `git config --global`. A workspace's
// files (its .npmrc, a repository's remotes) are never read here: the model can write those.

/** At most this much of one configuration file is read. */
const MAX_CONFIG_BYTES = 256 * 1024;

function readSmall(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').slice(0, MAX_CONFIG_BYTES);
  } catch {
    return undefined;
  }
}

/** `registry=`, `@scope:registry=` and `//host/:_authToken=`-style lines of an .npmrc. */
export function npmrcHosts(text: string, source: string): HostRule[] {
  const rules: HostRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('#') || line.startsWith(';')) continue;
    const registry = /^(?:@[\w.-]+:)?registry\s*=\s*(\S+)/i.exec(line);
    const scoped = /^\/\/([^/\s:]+(?::\d+)?)\//.exec(line);
    const rule = registry ? ruleOfUrl(registry[1]!, source) : scoped ? ruleOfUrl(`https://${scoped[1]}/`, source) : undefined;
    if (rule !== undefined) rules.push(rule);
  }
  return rules;
}

/** `index-url`, `extra-index-url` (several, on continuation lines too) and `trusted-host` of a pip config. */
export function pipHosts(text: string, source: string): HostRule[] {
  const rules: HostRule[] = [];
  let key = '';
  for (const raw of text.split(/\r?\n/)) {
    const continued = /^\s+\S/.test(raw) && key !== '';
    const setting = continued ? null : /^([\w-]+)\s*[=:]\s*(.*)$/.exec(raw);
    if (setting) key = setting[1]!.toLowerCase();
    else if (!continued) key = '';
    const values = (setting ? setting[2]! : continued ? raw : '').split(/\s+/).filter((v) => v !== '');
    for (const value of values) {
      const rule =
        key === 'index-url' || key === 'extra-index-url' || key === 'find-links'
          ? ruleOfUrl(value, source)
          : key === 'trusted-host'
            ? parseHostRule(value, source)
            : undefined;
      if (rule !== undefined) rules.push(rule);
    }
  }
  return rules;
}

/** The URLs named in `git config --global --list` keys and values (url.<base>.insteadOf, http.<url>.*, credential.<url>.*). */
export function gitConfigHosts(listing: string, source: string): HostRule[] {
  const rules: HostRule[] = [];
  for (const line of listing.split('\n')) {
    for (const url of line.match(/https?:\/\/[^\s=]+/gi) ?? []) {
      const rule = ruleOfUrl(url, source);
      if (rule !== undefined) rules.push(rule);
    }
  }
  return rules;
}

function gitGlobalListing(env: NodeJS.ProcessEnv): string {
  const result = spawnSync('git', ['config', '--global', '--list'], {
    env: {
      PATH: env['PATH'] ?? '',
      HOME: env['HOME'] ?? '',
      ...(env['XDG_CONFIG_HOME'] ? { XDG_CONFIG_HOME: env['XDG_CONFIG_HOME'] } : {}),
    },
    encoding: 'utf8',
    timeout: 3000,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return result.status === 0 ? result.stdout.slice(0, MAX_CONFIG_BYTES) : '';
}

/** The allowlist the person's user-level configuration names (duplicates removed), read now. */
export function userConfiguredHosts(env: NodeJS.ProcessEnv = process.env): HostRule[] {
  const home = env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir();
  const config = env['XDG_CONFIG_HOME'] !== undefined && env['XDG_CONFIG_HOME'] !== '' ? env['XDG_CONFIG_HOME'] : join(home, '.config');
  const npmrc =
    env['NPM_CONFIG_USERCONFIG'] !== undefined && env['NPM_CONFIG_USERCONFIG'] !== '' ? env['NPM_CONFIG_USERCONFIG'] : join(home, '.npmrc');
  const rules = [
    ...npmrcHosts(readSmall(npmrc) ?? '', '~/.npmrc'),
    ...[join(config, 'pip', 'pip.conf'), join(home, '.pip', 'pip.conf')].flatMap((path) =>
      pipHosts(readSmall(path) ?? '', path.replace(home, '~')),
    ),
    ...gitConfigHosts(gitGlobalListing(env), 'git config --global'),
  ];
  const seen = new Set<string>();
  return rules.filter((rule) => {
    const key = `${rule.host}:${rule.port ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
