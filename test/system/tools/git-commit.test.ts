import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResponseStep } from '../../support/fake-anthropic/server';
import { nodeGitCommitter } from '../../../src/host/node/git/committer';
import {
  answer,
  harness,
  lastToolResults,
  readText,
  reply,
  ScriptedApprover,
  SETTINGS,
  tempDir,
  toolUse,
  type Harness,
} from '../../unit/runtime/harness';

// git_commit and git_revert with real git in a temporary repository whose own configuration is
// hostile: a pre-commit hook (and every other hook), an fsmonitor program, a clean filter for every
// file and a signing program all write a marker file if they ever run; the repository's user.name
// pretends to be someone else. None may run, the author is the person of the global configuration,
// a trailer names the agent, nothing is pushed, and a revert undoes the commit.

const TRAP = (name: string, markers: string) => `#!/bin/sh\necho ran > "${markers}/${name}"\ncat\n`;

function git(cwd: string, args: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], { cwd, env, encoding: 'utf8' });
}

function hostileRepo(root: string, home: string, markers: string): NodeJS.ProcessEnv {
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' };
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Pat Person\n\temail = pat@example.com\n');
  git(root, ['init', '-q', '-b', 'main'], env);
  git(root, ['add', '-A'], env);
  git(root, ['commit', '-q', '-m', 'start'], env);
  // A bare remote the branch tracks: a push would show up there.
  const remote = join(home, 'remote.git');
  execFileSync('git', ['init', '-q', '--bare', remote], { env });
  git(root, ['remote', 'add', 'origin', remote], env);
  git(root, ['push', '-q', 'origin', 'main'], env);
  const trap = (name: string) => {
    const path = join(home, `${name}.sh`);
    writeFileSync(path, TRAP(name, markers));
    chmodSync(path, 0o755);
    return path;
  };
  const hooks = join(root, '.git', 'hooks');
  for (const hook of [
    'pre-commit',
    'commit-msg',
    'prepare-commit-msg',
    'post-commit',
    'reference-transaction',
    'pre-push',
    'post-index-change',
  ]) {
    writeFileSync(join(hooks, hook), TRAP(hook, markers));
    chmodSync(join(hooks, hook), 0o755);
  }
  for (const [key, value] of [
    ['core.fsmonitor', trap('fsmonitor')],
    ['filter.evil.clean', trap('clean')],
    ['filter.evil.smudge', trap('smudge')],
    ['filter.evil.required', 'true'],
    ['commit.gpgSign', 'true'],
    ['gpg.program', trap('gpg')],
    ['user.name', 'Mallory'],
    ['user.email', 'mallory@example.com'],
    ['credential.helper', trap('credential')],
  ])
    git(root, ['config', key!, value!], env);
  writeFileSync(join(root, '.git', 'info', 'attributes'), '* filter=evil\n');
  return env;
}

describe('git_commit and git_revert in a real repository with hostile configuration', function () {
  this.timeout(60_000);
  // The traps are shell scripts with an executable bit.
  before(function () {
    if (process.platform === 'win32') this.skip();
  });
  let h: Harness | undefined;
  let home = '';
  afterEach(async () => {
    await h?.close();
    h = undefined;
    rmSync(home, { recursive: true, force: true });
  });

  it('commits the kept changes, runs none of the repository’s programs, names the person and the agent, pushes nothing; a revert undoes it', async () => {
    let commitId = '';
    const steps: (() => ResponseStep)[] = [
      () =>
        reply([
          toolUse('w1', 'write_file', { path: 'a.txt', content: 'two\n' }),
          toolUse('w2', 'write_file', { path: 'c.txt', content: 'new\n' }),
        ]),
      () => answer('written'),
      () => reply([toolUse('g1', 'git_commit', { message: 'Change a, add c\n\nAsked by the person.' })]),
      () => answer('committed'),
      () => reply([toolUse('g2', 'git_revert', { commit: commitId })]),
      () => answer('reverted'),
    ];
    const approver = new ScriptedApprover(['allow_for_run', 'allow_for_run']);
    h = await harness({
      store: 'file',
      approver,
      files: { 'a.txt': 'one\n', 'b.txt': 'base\n' },
      script: (request) => {
        const turn = ((request.body as { messages: { role: string }[] }).messages ?? []).filter((m) => m.role === 'assistant').length;
        return steps[turn]!();
      },
    });
    home = tempDir('home');
    const markers = join(home, 'markers');
    mkdirSync(markers);
    const env = hostileRepo(h.root, home, markers);
    // The person's own changes: a staged one in b.txt, and an untracked file.
    writeFileSync(join(h.root, 'b.txt'), 'mine\n');
    git(h.root, ['add', 'b.txt'], env);
    writeFileSync(join(h.root, 'notes.txt'), 'private\n');
    const before = git(h.root, ['rev-parse', 'HEAD'], env).trim();
    // The test's own git calls above ran the traps (as the person's git would): only the tools' runs are looked at.
    const noneRan = (when: string) => {
      assert.deepEqual(readdirSync(markers), [], `${when}: no hook, fsmonitor, filter, signing or credential program ran`);
    };
    rmSync(markers, { recursive: true });
    mkdirSync(markers);
    const runtime = h.runtime({ gitCommits: nodeGitCommitter(env) });

    const first = await runtime.start({ task: 'change a, add c', settings: SETTINGS });
    assert.equal(first.status, 'completed', first.reason);
    const patches = (await h.records(first.runId)).flatMap((r) => (r.type === 'patch' ? [r.patch.patchId] : []));
    await h.store.appendDecisions!(
      first.runId,
      patches.map((patchId) => ({ type: 'patch_state' as const, patchId, state: 'accepted' as const, reason: 'kept' })),
    );

    const second = await runtime.continue(first.runId, 'commit it', new AbortController().signal, { moreTurns: 5 });
    assert.equal(second.status, 'completed', second.reason);
    noneRan('git_commit');
    const asked = approver.approvals.find((a) => a.toolName === 'git_commit');
    assert.ok(asked?.reason !== undefined, 'asked with a reason: allow-for-run never answers it');
    for (const part of [
      'a.txt',
      'c.txt',
      'Pat Person <pat@example.com>',
      'Change a, add c',
      'commit-tree',
      'core.hooksPath=/dev/null',
      'nothing is pushed',
    ])
      assert.ok(asked.summary.includes(part), `the approval shows ${part}:\n${asked.summary}`);
    assert.ok(!asked.summary.includes('b.txt') && !asked.summary.includes('notes.txt'), 'the person’s files are not in it');
    const result = JSON.parse(lastToolResults(h.fake, 3)[0]!.content) as { commit: string; pushed: boolean };
    commitId = result.commit;
    assert.equal(git(h.root, ['rev-parse', 'HEAD'], env).trim(), commitId);
    assert.equal(git(h.root, ['rev-parse', 'HEAD^'], env).trim(), before);
    assert.equal(
      git(h.root, ['show', '--no-patch', '--format=%an <%ae>|%cn <%ce>', commitId], env).trim(),
      'Pat Person <pat@example.com>|Pat Person <pat@example.com>',
    );
    const message = git(h.root, ['show', '--no-patch', '--format=%B', commitId], env);
    assert.match(message, /^Co-authored-by: Agent Checkpoints </m);
    assert.deepEqual(git(h.root, ['show', '--name-only', '--format=', commitId], env).trim().split('\n'), ['a.txt', 'c.txt']);
    assert.equal(git(h.root, ['show', `${commitId}:a.txt`], env), 'two\n', 'the bytes as they are (no clean filter)');
    assert.equal(git(h.root, ['cat-file', '-p', commitId], env).includes('gpgsig'), false, 'not signed by the repository’s program');
    // The person's staging stays theirs: b.txt is still staged, not committed; the committed files are clean.
    const status = git(h.root, ['-c', 'core.fsmonitor=false', 'status', '--porcelain', '--untracked-files=all'], env);
    assert.match(status, /^M {2}b\.txt$/m);
    assert.match(status, /^\?\? notes\.txt$/m);
    assert.ok(!/a\.txt|c\.txt/.test(status), status);
    assert.equal(git(h.root, ['rev-parse', 'origin/main'], env).trim(), before, 'nothing pushed');
    assert.equal(execFileSync('git', ['--git-dir', join(home, 'remote.git'), 'rev-parse', 'main'], { encoding: 'utf8' }).trim(), before);

    rmSync(markers, { recursive: true });
    mkdirSync(markers);
    const third = await runtime.continue(first.runId, 'undo that commit', new AbortController().signal, { moreTurns: 5 });
    assert.equal(third.status, 'completed', third.reason);
    noneRan('git_revert');
    const revert = JSON.parse(lastToolResults(h.fake, 5)[0]!.content) as { commit: string; reverts: string };
    assert.equal(revert.reverts, commitId);
    assert.equal(git(h.root, ['rev-parse', 'HEAD^'], env).trim(), commitId, 'a new commit: history kept');
    assert.equal(readText(h.root, 'a.txt'), 'one\n');
    assert.equal(existsSync(join(h.root, 'c.txt')), false);
    assert.equal(git(h.root, ['show', 'HEAD:a.txt'], env), 'one\n');
  });
});
