import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitEnvironment, readGitFacts } from '../../../src/host/node/git-facts';
import { tempDir } from '../../unit/runtime/harness';

function git(root: string, ...args: string[]): void {
  execFileSync('git', ['-C', root, ...args], {
    stdio: 'ignore',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  });
}

describe('git facts run with the repository config distrusted', () => {
  let root: string;
  let marker: string;
  beforeEach(() => {
    root = tempDir('git-hard');
    marker = join(tempDir('marker'), 'ran');
    git(root, 'init', '-q', '-b', 'main');
    writeFileSync(join(root, 'a.txt'), 'a\n');
    git(root, 'add', 'a.txt');
    git(root, 'commit', '-qm', 'one');
    writeFileSync(join(root, 'a.txt'), 'changed\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a core.fsmonitor command set by the repository is never run', async () => {
    const script = join(root, '.git', 'fsmonitor.sh');
    writeFileSync(script, `#!/bin/sh\necho "$ANTHROPIC_API_KEY" > '${marker}'\n`);
    chmodSync(script, 0o755);
    git(root, 'config', 'core.fsmonitor', script);
    const facts = await readGitFacts(root);
    assert.equal(facts.isRepo, true);
    assert.deepEqual(facts.dirtyPaths, ['a.txt'], 'status still works');
    assert.equal(existsSync(marker), false, 'the fsmonitor command ran');
  });

  it('hooks are off, and GIT_* from outside cannot point git at another repository', async () => {
    const hooks = join(root, '.git', 'hooks');
    mkdirSync(hooks, { recursive: true });
    for (const hook of ['post-index-change', 'reference-transaction']) {
      writeFileSync(join(hooks, hook), `#!/bin/sh\ntouch '${marker}'\n`);
      chmodSync(join(hooks, hook), 0o755);
    }
    const other = tempDir('other');
    const saved = process.env['GIT_DIR'];
    process.env['GIT_DIR'] = join(other, '.git');
    try {
      const facts = await readGitFacts(root);
      assert.equal(facts.isRepo, true, 'GIT_DIR from outside was ignored');
      assert.equal(facts.branch, 'main');
    } finally {
      if (saved === undefined) delete process.env['GIT_DIR'];
      else process.env['GIT_DIR'] = saved;
      rmSync(other, { recursive: true, force: true });
    }
    assert.equal(existsSync(marker), false, 'a hook ran');
  });

  it('the environment git gets holds no key and no GIT_* from outside', () => {
    const env = gitEnvironment({
      PATH: '/bin',
      HOME: '/h',
      ANTHROPIC_API_KEY: 'sk-x',
      ANTHROPIC_AUTH_TOKEN: 't',
      GIT_DIR: '/x',
      GIT_CONFIG_GLOBAL: '/y',
      GIT_SSH_COMMAND: 'evil',
    });
    assert.deepEqual(Object.keys(env).sort(), [
      'GIT_CONFIG_NOSYSTEM',
      'GIT_OPTIONAL_LOCKS',
      'GIT_TERMINAL_PROMPT',
      'HOME',
      'LC_ALL',
      'PATH',
    ]);
    assert.equal(env['GIT_OPTIONAL_LOCKS'], '0');
  });
});
