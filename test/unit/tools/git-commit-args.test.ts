import { strict as assert } from 'node:assert';
import { commitEnvironment, hardeningArgs, repositoryFilters, signingArgs, userSettingsOf } from '../../../src/host/node/git/commit-args';

// How git runs for a commit: the repository's programs off, the person's own (global) ones kept.

const optionsOf = (args: readonly string[]): Map<string, string> => {
  const values = new Map<string, string>();
  args.forEach((arg, i) => {
    if (args[i - 1] !== '-c') return;
    const at = arg.indexOf('=');
    values.set(arg.slice(0, at), arg.slice(at + 1));
  });
  return values;
};

describe('git commit arguments (host/node/git/commit-args)', () => {
  it('switches off hooks, the fsmonitor, signing, credential helpers, auto gc and the repository’s filter drivers', () => {
    const args = hardeningArgs(userSettingsOf(''), ['evil', 'lfs.x']);
    const c = optionsOf(args);
    assert.equal(c.get('core.hooksPath'), '/dev/null');
    assert.equal(c.get('core.fsmonitor'), 'false');
    assert.equal(c.get('commit.gpgSign'), 'false');
    assert.equal(c.get('credential.helper'), '');
    assert.equal(c.get('gc.auto'), '0');
    for (const name of ['evil', 'lfs.x']) {
      for (const part of ['clean', 'smudge', 'process']) assert.equal(c.get(`filter.${name}.${part}`), '', `${name}.${part}`);
      assert.equal(c.get(`filter.${name}.required`), 'false');
    }
    assert.ok(args.includes('--literal-pathspecs'));
    assert.deepEqual(signingArgs(userSettingsOf('')), ['--no-gpg-sign']);
    assert.equal(c.has('gpg.program'), false);
  });

  it('keeps what the person turned on in their user configuration, with the values from that file', () => {
    const listing = [
      'user.name\nPat Person',
      'user.email\npat@example.com',
      'core.hookspath\n/home/pat/hooks',
      'core.fsmonitor\ntrue',
      'commit.gpgsign\ntrue',
      'gpg.program\n/usr/bin/gpg2',
      'user.signingkey\nABC123',
      '',
    ].join('\0');
    const user = userSettingsOf(listing);
    assert.deepEqual([user.name, user.email, user.sign], ['Pat Person', 'pat@example.com', true]);
    const c = optionsOf(hardeningArgs(user));
    assert.equal(c.get('core.hooksPath'), '/home/pat/hooks');
    assert.equal(c.get('core.fsmonitor'), 'true');
    assert.equal(c.get('commit.gpgSign'), 'true');
    assert.equal(c.get('gpg.program'), '/usr/bin/gpg2', 'the program of the user config, not one a repository names');
    assert.equal(c.get('user.signingKey'), 'ABC123');
    assert.deepEqual(signingArgs(user), ['-S']);
    // A user value of "false" is not a program to keep.
    assert.equal(optionsOf(hardeningArgs(userSettingsOf('core.fsmonitor\nfalse\0'))).get('core.fsmonitor'), 'false');
  });

  it('finds the filter drivers the repository defines, not the person’s global ones', () => {
    const listing = [
      'local',
      'filter.evil.clean\n./x.sh',
      'global',
      'filter.lfs.clean\ngit-lfs clean -- %f',
      'worktree',
      'filter.a.b.process\n./y',
      'local',
      'filter.evil.required\ntrue',
      '',
    ].join('\0');
    assert.deepEqual(repositoryFilters(listing), ['a.b', 'evil']);
    assert.deepEqual(repositoryFilters(''), []);
  });

  it('builds the environment like a command’s: credentials and GIT_* from outside withheld, the person as author', () => {
    const env = commitEnvironment(
      { PATH: '/bin', HOME: '/home/pat', GITHUB_TOKEN: 't', AWS_SECRET_ACCESS_KEY: 's', GIT_DIR: '/elsewhere', ANTHROPIC_API_KEY: 'k' },
      userSettingsOf('user.name\nPat\0user.email\np@x\0'),
    );
    for (const name of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'GIT_DIR', 'ANTHROPIC_API_KEY']) assert.equal(env[name], undefined, name);
    assert.equal(env.PATH, '/bin');
    assert.equal(env.GIT_TERMINAL_PROMPT, '0');
    assert.deepEqual(
      [env.GIT_AUTHOR_NAME, env.GIT_AUTHOR_EMAIL, env.GIT_COMMITTER_NAME, env.GIT_COMMITTER_EMAIL],
      ['Pat', 'p@x', 'Pat', 'p@x'],
    );
  });
});
