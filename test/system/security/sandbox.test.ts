import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { CommandResult } from '../../../src/core/ports';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { detectSandbox, type SandboxRequest } from '../../../src/host/node/sandbox/index';
import { applyToDisk } from './sandbox-support';
import { tempDir } from '../../unit/runtime/harness';

const hasBwrap = detectSandbox().kind === 'bwrap';

describe('run_command in a sandbox (bubblewrap)', function () {
  this.timeout(30_000);
  let base = '';
  let ws = '';
  let home = '';
  let store = '';
  let views = '';
  let request: Partial<SandboxRequest> = {};

  before(function () {
    if (!hasBwrap) this.skip();
  });

  beforeEach(() => {
    base = tempDir('sandbox');
    ws = join(base, 'ws');
    home = join(base, 'home');
    store = join(base, 'store');
    views = join(store, 'command-views');
    mkdirSync(join(ws, '.vscode'), { recursive: true });
    writeFileSync(join(ws, '.vscode', 'settings.json'), '{}\n');
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    mkdirSync(join(home, '.config', 'agent-checkpoints'), { recursive: true });
    writeFileSync(join(home, '.config', 'agent-checkpoints', 'trusted-workspaces'), '/\n');
    writeFileSync(join(home, 'secret.txt'), 'home secret\n');
    mkdirSync(store);
    writeFileSync(join(store, 'journal.jsonl'), 'store\n');
    request = {};
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  async function run(command: string): Promise<CommandResult & { text: string }> {
    const runner = createNodeCommandRunner({
      env: { PATH: `${join(home, 'tools', 'bin')}:${process.env['PATH']}`, HOME: home },
      sandbox: () => ({
        roots: [ws],
        protectedPaths: [],
        hidden: [store],
        homePaths: [],
        network: true,
        home,
        programDirs: [join(home, 'tools', 'bin')],
        views,
        ...request,
      }),
    });
    const result = await runner.run(command, { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 64 * 1024 });
    const changes = await applyToDisk([ws], result.changes);
    return { ...result, text: formatCommandResult(result, changes) };
  }

  /** What the views folder holds (a finished command leaves nothing there). */
  const leftViews = (): string[] => (existsSync(views) ? readdirSync(views) : []);

  function git(...args: string[]): void {
    execFileSync('git', ['-C', ws, ...args], { stdio: 'ignore' });
  }

  it('the workspace is writable; a protected path is read-only and the result names the rule and how to allow it', async () => {
    const ok = await run('echo b > a.txt && mkdir -p out && echo o > out/o.txt');
    assert.equal(ok.exitCode, 0, ok.text);
    assert.equal(readFileSync(join(ws, 'out', 'o.txt'), 'utf8'), 'o\n');
    const hit = await run('echo \'{"x":1}\' > .vscode/settings.json');
    assert.notEqual(hit.exitCode, 0);
    assert.match(hit.stderr, /Read-only file system/);
    assert.match(hit.text, /--- sandbox ---[\s\S]*\.vscode: protected path \*\*\/\.vscode\{,\/\*\*\}/);
    assert.match(hit.text, /write_file or edit_file[\s\S]*agentCheckpoints\.sandbox: off/);
    assert.equal(readFileSync(join(ws, '.vscode', 'settings.json'), 'utf8'), '{}\n');
  });

  it('a command changes its own view: the workspace changes only when the change set is applied, and nothing else is left', async () => {
    const runner = createNodeCommandRunner({
      sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [store], homePaths: [], network: false, views }),
    });
    const result = await runner.run('echo b > a.txt; echo n > new.txt; cat a.txt', { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 4096 });
    assert.equal(result.stdout, 'b\n', 'the command sees its own writes');
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'a\n', 'the workspace is untouched until the change set is applied');
    assert.equal(existsSync(join(ws, 'new.txt')), false);
    assert.equal(result.changes?.via, 'view');
    assert.deepEqual(result.changes?.files.map((f) => [f.path, f.kind]).sort(), [
      [join(ws, 'a.txt'), 'write'],
      [join(ws, 'new.txt'), 'write'],
    ]);
    await applyToDisk([ws], result.changes);
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'b\n');
    assert.deepEqual(leftViews(), [], 'the view is discarded once applied');
  });

  it('a protected path a command creates, at any depth, is refused when applied and named with its rule; nothing is made in the workspace', async () => {
    rmSync(join(ws, '.vscode'), { recursive: true });
    mkdirSync(join(ws, 'sub'));
    const hit = await run(
      'mkdir -p .vscode sub/.vscode && echo x > .vscode/tasks.json; echo x > sub/.vscode/tasks.json; mkdir .devcontainer; echo x > .envrc; echo {} > evil.code-workspace; echo kept > sub/ok.txt; echo done',
    );
    assert.match(hit.stdout, /done/);
    assert.deepEqual(readdirSync(ws).sort(), ['a.txt', 'sub']);
    assert.deepEqual(readdirSync(join(ws, 'sub')), ['ok.txt']);
    assert.match(hit.text, /Not applied \(refused[^\n]*\n[\s\S]*\.vscode\/tasks\.json: protected path: \*\*\/\.vscode\{,\/\*\*\}/);
    assert.match(hit.text, /evil\.code-workspace: protected path: \*\*\/\*\.code-workspace/);
    assert.match(hit.text, /\.envrc: protected path: \*\*\/\.envrc/);
    assert.match(hit.text, /A sub\/ok\.txt/);
  });

  it('three chains of commands at once in one folder never break each other (each has its own view)', async () => {
    rmSync(join(ws, '.vscode'), { recursive: true });
    const chain = async (name: string): Promise<string[]> => {
      const failures: string[] = [];
      for (let i = 0; i < 40; i++) {
        const hit = await run(`echo ${name}${i}`);
        if (hit.exitCode !== 0 || hit.stdout.trim() !== `${name}${i}`) failures.push(hit.text);
      }
      return failures;
    };
    const failures = (await Promise.all(['a', 'b', 'c'].map(chain))).flat();
    assert.deepEqual(failures, [], `${failures.length} of 120 failed; the first: ${failures[0]}`);
    assert.deepEqual(readdirSync(ws).sort(), ['a.txt'], 'nothing new in the folder');
    assert.deepEqual(leftViews(), []);
  });

  it('a command cancelled before it started leaves no view', async () => {
    const runner = createNodeCommandRunner({
      sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views }),
    });
    const cancelled = new AbortController();
    cancelled.abort();
    await assert.rejects(
      runner.run('echo never', { cwd: ws, timeoutMs: 5000, maxOutputBytes: 1024, signal: cancelled.signal }),
      /cancelled/,
    );
    assert.deepEqual(readdirSync(ws).sort(), ['.vscode', 'a.txt']);
    assert.deepEqual(leftViews(), []);
  });

  it('a host killed mid-command leaves nothing new in the workspace; its view goes when the next runner starts', async () => {
    const child = join(base, 'killed-mid-command.ts');
    const runner = join(__dirname, '../../../src/host/node/command-runner');
    const sandbox = { roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views };
    writeFileSync(
      child,
      `import { createNodeCommandRunner } from ${JSON.stringify(runner)};\n` +
        `const r = createNodeCommandRunner({ sandbox: () => (${JSON.stringify(sandbox)}) });\n` +
        `void r.run('echo x > made.txt; echo y >> a.txt; sleep 30', { cwd: ${JSON.stringify(ws)}, timeoutMs: 60000, maxOutputBytes: 1024 });\n` +
        // Killed once the command wrote into its view (however slow the machine), or after 10 s.
        `import { existsSync, readdirSync } from 'node:fs';\n` +
        `const views = ${JSON.stringify(views)};\n` +
        'const wrote = () => existsSync(views) && readdirSync(views).some((v) => existsSync(views + "/" + v + "/u0/made.txt"));\n' +
        'setInterval(() => wrote() && process.kill(process.pid, "SIGKILL"), 20);\n' +
        'setTimeout(() => process.kill(process.pid, "SIGKILL"), 10000);\n',
    );
    spawnSync(process.execPath, ['--import', 'tsx', child], { stdio: 'ignore' });
    assert.deepEqual(readdirSync(ws).sort(), ['.vscode', 'a.txt'], 'nothing new in the workspace');
    assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'a\n');
    assert.equal(leftViews().length, 1, 'the killed host left its view');
    createNodeCommandRunner({ sandbox: () => sandbox });
    await new Promise((resolve) => setImmediate(resolve)); // the sweep was queued first
    assert.deepEqual(leftViews(), [], 'swept at the start');
  });

  it('.git is read-only (hooks, config), cannot be moved aside, and git can still read it', async () => {
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'one');
    const config = readFileSync(join(ws, '.git', 'config'), 'utf8');
    const hit = await run(
      'echo evil > .git/hooks/pre-commit; git config core.fsmonitor evil; mv .git .git2; rm -rf .git; touch .git/commondir; git log --oneline | wc -l',
    );
    assert.equal(hit.stdout.trim(), '1', hit.text);
    assert.equal(existsSync(join(ws, '.git', 'hooks', 'pre-commit')), false);
    assert.equal(existsSync(join(ws, '.git', 'commondir')), false);
    assert.equal(existsSync(join(ws, '.git2')), false);
    assert.equal(readFileSync(join(ws, '.git', 'config'), 'utf8'), config);
    assert.match(hit.text, /\.git: \.git\/ \(git data: read-only/);
  });

  it("a workspace without a repository: a command cannot git init one (whose config the editor's git would run)", async () => {
    const hit = await run('git init -q . ; git config core.fsmonitor "touch pwned" ; echo done');
    assert.match(hit.stdout, /done/);
    assert.equal(existsSync(join(ws, '.git')), false, 'no repository left behind');
    assert.match(hit.text, /\.git\/config: \.git\/ \(git data: read-only in the sandbox/);
  });

  it('a .git file pointing at a git directory inside the workspace: that directory is read-only too', async () => {
    mkdirSync(join(ws, 'real-git', 'hooks'), { recursive: true });
    writeFileSync(join(ws, '.git'), 'gitdir: real-git\n');
    const hit = await run('echo evil > real-git/hooks/post-checkout; echo "gitdir: /tmp" > .git; echo done');
    assert.match(hit.stdout, /done/);
    assert.equal(existsSync(join(ws, 'real-git', 'hooks', 'post-checkout')), false);
    assert.equal(readFileSync(join(ws, '.git'), 'utf8'), 'gitdir: real-git\n');
  });

  it('programs on PATH inside the home folder still run (read-only, with the lib beside their bin); the rest of home stays hidden', async () => {
    mkdirSync(join(home, 'tools', 'bin'), { recursive: true });
    mkdirSync(join(home, 'tools', 'lib'), { recursive: true });
    writeFileSync(join(home, 'tools', 'lib', 'greeting'), 'hello from lib\n');
    writeFileSync(join(home, 'tools', 'bin', 'my-tool'), `#!/bin/sh\ncat ${join(home, 'tools', 'lib', 'greeting')}\n`, { mode: 0o755 });
    const hit = await run(`my-tool; echo x > ${join(home, 'tools', 'bin', 'my-tool')}; cat ${join(home, 'secret.txt')}`);
    assert.match(hit.stdout, /hello from lib/, hit.text);
    assert.doesNotMatch(hit.stdout, /home secret/);
    assert.match(readFileSync(join(home, 'tools', 'bin', 'my-tool'), 'utf8'), /^#!\/bin\/sh/);
  });

  it('home, the store and the tool config are out of sight; /tmp is private', async () => {
    const hit = await run(
      `cat ${join(home, 'secret.txt')}; cat ${join(store, 'journal.jsonl')}; echo x >> ${join(home, '.config', 'agent-checkpoints', 'trusted-workspaces')}; echo t > /tmp/sandbox-leak-test; ls -A ${home} | wc -l`,
    );
    assert.doesNotMatch(hit.stdout, /home secret|store/);
    assert.equal(readFileSync(join(home, '.config', 'agent-checkpoints', 'trusted-workspaces'), 'utf8'), '/\n');
    assert.equal(existsSync('/tmp/sandbox-leak-test'), false);
    assert.equal(readFileSync(join(store, 'journal.jsonl'), 'utf8'), 'store\n');
  });

  it('a store inside the workspace is hidden as well', async () => {
    const inner = join(ws, '.agent-store');
    mkdirSync(inner);
    writeFileSync(join(inner, 'journal.jsonl'), 'inner\n');
    request = { hidden: [inner] };
    const hit = await run('cat .agent-store/journal.jsonl; echo x > .agent-store/journal.jsonl; ls -A .agent-store | wc -l');
    assert.doesNotMatch(hit.stdout, /inner/);
    assert.equal(readFileSync(join(inner, 'journal.jsonl'), 'utf8'), 'inner\n');
  });

  it('own PID namespace: no process of the machine is visible, so no /proc/<pid>/environ of the host', async () => {
    const hit = await run(
      `ls /proc | grep -c '^[0-9]'; cat /proc/${process.pid}/environ 2>&1 | head -c 50; echo; cat /proc/1/cmdline | tr '\\0' ' '`,
    );
    const [count] = hit.stdout.trim().split('\n');
    assert.ok(Number(count) <= 6, hit.text);
    assert.doesNotMatch(hit.stdout, /PATH=/);
  });

  it('cannot remount the read-only system or the protected paths (no capabilities), even when started by root', async () => {
    const hit = await run(
      'mount -o remount,rw / 2>&1; mount -o remount,rw .vscode 2>&1; umount .vscode 2>&1; echo x > .vscode/settings.json; grep CapEff /proc/self/status',
    );
    assert.match(hit.stdout, /CapEff:\s+0+\n/);
    assert.equal(readFileSync(join(ws, '.vscode', 'settings.json'), 'utf8'), '{}\n');
  });

  it('symlinks and hard links in the workspace give no way around: to a protected path, to home, out of the workspace', async () => {
    symlinkSync(join(ws, '.vscode', 'settings.json'), join(ws, 'link-settings'));
    symlinkSync(join(home, 'secret.txt'), join(ws, 'link-home'));
    const hit = await run(
      'echo x > link-settings; cat link-home; ln .vscode/settings.json hard 2>&1; echo x > hard; ln -s ../../.. up; echo y >> up/tmp-sandbox-x 2>&1; echo done',
    );
    assert.match(hit.stdout, /done/);
    assert.doesNotMatch(hit.stdout, /home secret/);
    assert.equal(readFileSync(join(ws, '.vscode', 'settings.json'), 'utf8'), '{}\n');
  });

  it('a protected path that is itself a symlink: the command does not run, and the result says why', async () => {
    rmSync(join(ws, '.vscode'), { recursive: true });
    mkdirSync(join(base, 'elsewhere'));
    symlinkSync(join(base, 'elsewhere'), join(ws, '.vscode'));
    const hit = await run('touch ran');
    assert.equal(hit.exitCode, 126);
    assert.match(hit.text, /\.vscode is a protected path and a symbolic link/);
    assert.equal(existsSync(join(ws, 'ran')), false);
  });

  it('changes to nested protected paths and the person’s protectedPaths are refused when applied', async () => {
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', '.envrc'), 'ok\n');
    mkdirSync(join(ws, 'sub', 'secrets'));
    writeFileSync(join(ws, 'sub', 'secrets', 'k'), 'k\n');
    request = { protectedPaths: ['**/secrets/**'] };
    const hit = await run('echo evil > sub/.envrc; echo evil > sub/secrets/k; echo done');
    assert.match(hit.stdout, /done/);
    assert.equal(readFileSync(join(ws, 'sub', '.envrc'), 'utf8'), 'ok\n');
    assert.equal(readFileSync(join(ws, 'sub', 'secrets', 'k'), 'utf8'), 'k\n');
    assert.match(hit.text, /sub\/\.envrc: protected path: \*\*\/\.envrc/);
    assert.match(hit.text, /sub\/secrets\/k: protected path: \*\*\/secrets\/\*\*/);
  });

  it('a nested git folder (a sub-repository), however deep: a write there is refused when applied; descriptors the host inherited are closed', async () => {
    mkdirSync(join(ws, 'vendor', 'a', 'b', 'c', 'lib', '.git', 'hooks'), { recursive: true });
    const hit = await run('echo evil > vendor/a/b/c/lib/.git/hooks/pre-commit; ls /proc/self/fd | tr "\\n" " "; echo');
    assert.equal(existsSync(join(ws, 'vendor', 'a', 'b', 'c', 'lib', '.git', 'hooks', 'pre-commit')), false);
    assert.match(hit.text, /lib\/\.git\/hooks\/pre-commit: \.git\/ \(git data/);
    const fds = hit.stdout.trim().split(/\s+/).map(Number);
    assert.ok(
      fds.every((fd) => fd <= 3),
      `inherited descriptors: ${hit.stdout}`,
    );
  });

  describe('network', () => {
    let server: Server;
    let port = 0;
    before(async () => {
      server = createServer((_req, res) => res.end('pong'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(() => server.close());

    it('on: a command reaches the network; off: it does not', async () => {
      const probe = `node -e "require('http').get('http://127.0.0.1:${port}',r=>r.on('data',d=>console.log(String(d)))).on('error',e=>console.log(e.code))"`;
      const on = await run(probe);
      assert.match(on.stdout, /pong/, on.text);
      request = { network: false };
      const off = await run(probe);
      assert.match(off.stdout, /ECONNREFUSED|ENETUNREACH/, off.text);
    });
  });
});
