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
import { WALK_LIMIT } from '../../../src/host/node/sandbox/plan';
import { tempDir } from '../../unit/runtime/harness';

const hasBwrap = detectSandbox().kind === 'bwrap';

describe('run_command in a sandbox (bubblewrap)', function () {
  this.timeout(30_000);
  let base = '';
  let ws = '';
  let home = '';
  let store = '';
  let request: Partial<SandboxRequest> = {};

  before(function () {
    if (!hasBwrap) this.skip();
  });

  beforeEach(() => {
    base = tempDir('sandbox');
    ws = join(base, 'ws');
    home = join(base, 'home');
    store = join(base, 'store');
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
        ...request,
      }),
    });
    const result = await runner.run(command, { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 64 * 1024 });
    return { ...result, text: formatCommandResult(result) };
  }

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

  it('a protected folder that does not exist yet cannot be made; the placeholder is gone afterwards', async () => {
    rmSync(join(ws, '.vscode'), { recursive: true });
    const hit = await run('mkdir -p .vscode && echo x > .vscode/tasks.json; mkdir .devcontainer; echo x > .envrc; echo done');
    assert.match(hit.stdout, /done/);
    assert.equal(existsSync(join(ws, '.vscode', 'tasks.json')), false);
    assert.equal(existsSync(join(ws, '.envrc')), false, 'the empty placeholder is removed');
    assert.equal(existsSync(join(ws, '.vscode')), false);
    assert.equal(existsSync(join(ws, '.devcontainer')), false);
  });

  it('three chains of commands at once in one folder never break each other (placeholders are held until the last one ends)', async () => {
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
    assert.deepEqual(readdirSync(ws).sort(), ['a.txt'], 'every placeholder gone once the last command ended');
  });

  it('placeholders a dead process held are removed when the next command of the folder ends', async () => {
    rmSync(join(ws, '.vscode'), { recursive: true });
    const child = join(base, 'hold-and-die.ts');
    writeFileSync(
      child,
      `import { planSandbox } from ${JSON.stringify(join(__dirname, '../../../src/host/node/sandbox/plan'))};\n` +
        `planSandbox(${JSON.stringify({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false })});\n` +
        'process.kill(process.pid, "SIGKILL");\n',
    );
    spawnSync(process.execPath, ['--import', 'tsx', child], { stdio: 'ignore' });
    assert.ok(existsSync(join(ws, '.envrc')) && existsSync(join(ws, '.vscode')), 'the killed process left its placeholders');
    const hit = await run('echo next');
    assert.equal(hit.exitCode, 0, hit.text);
    assert.deepEqual(readdirSync(ws).sort(), ['a.txt'], 'swept with the dead hold');
  });

  it('a command cancelled before it started ends its holds: no placeholder stays in the folder', async () => {
    rmSync(join(ws, '.vscode'), { recursive: true });
    const runner = createNodeCommandRunner({
      sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false }),
    });
    const cancelled = new AbortController();
    cancelled.abort();
    await assert.rejects(
      runner.run('echo never', { cwd: ws, timeoutMs: 5000, maxOutputBytes: 1024, signal: cancelled.signal }),
      /cancelled/,
    );
    assert.deepEqual(readdirSync(ws).sort(), ['a.txt']);
  });

  it('a host killed mid-command: its placeholders go when the next runner of the folder starts, before any command', async () => {
    rmSync(join(ws, '.vscode'), { recursive: true });
    const child = join(base, 'killed-mid-command.ts');
    const runner = join(__dirname, '../../../src/host/node/command-runner');
    const sandbox = { roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false };
    writeFileSync(
      child,
      `import { createNodeCommandRunner } from ${JSON.stringify(runner)};\n` +
        `const r = createNodeCommandRunner({ sandbox: () => (${JSON.stringify(sandbox)}) });\n` +
        `void r.run('sleep 30', { cwd: ${JSON.stringify(ws)}, timeoutMs: 60000, maxOutputBytes: 1024 });\n` +
        'setTimeout(() => process.kill(process.pid, "SIGKILL"), 300);\n',
    );
    spawnSync(process.execPath, ['--import', 'tsx', child], { stdio: 'ignore' });
    assert.ok(existsSync(join(ws, '.envrc')), 'the killed host left its placeholders');
    createNodeCommandRunner({ sandbox: () => ({ ...sandbox, roots: [ws] }) });
    await new Promise((resolve) => setImmediate(resolve)); // the sweep was queued first
    assert.deepEqual(readdirSync(ws).sort(), ['a.txt'], 'swept at the start');
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
    assert.match(hit.text, /\.git\/ \(git data: read-only in the sandbox/);
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

  it('nested protected paths and the person’s protectedPaths are read-only', async () => {
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', '.envrc'), 'ok\n');
    mkdirSync(join(ws, 'secrets'));
    writeFileSync(join(ws, 'secrets', 'k'), 'k\n');
    request = { protectedPaths: ['secrets/**'] };
    const hit = await run('echo evil > sub/.envrc; echo evil > secrets/k; echo done');
    assert.match(hit.stdout, /done/);
    assert.equal(readFileSync(join(ws, 'sub', '.envrc'), 'utf8'), 'ok\n');
    assert.equal(readFileSync(join(ws, 'secrets', 'k'), 'utf8'), 'k\n');
  });

  it('a protected path the command creates where no placeholder can stand (deeper, or a new *.code-workspace) is set aside, not deleted, and the result says so', async () => {
    mkdirSync(join(ws, 'sub'));
    const hit = await run(
      'mkdir -p sub/.vscode && echo x > sub/.vscode/tasks.json; echo {} > evil.code-workspace; echo x > sub/.envrc; echo kept > sub/ok.txt',
    );
    assert.equal(existsSync(join(ws, 'sub', '.vscode')), false);
    assert.equal(existsSync(join(ws, 'evil.code-workspace')), false);
    assert.equal(existsSync(join(ws, 'sub', '.envrc')), false);
    assert.equal(readFileSync(join(ws, 'sub', 'ok.txt'), 'utf8'), 'kept\n');
    const aside = readdirSync(join(ws, 'sub')).find((name) => name.startsWith('.vscode.sandbox-blocked-'));
    assert.ok(aside !== undefined, readdirSync(join(ws, 'sub')).join(' '));
    assert.equal(readFileSync(join(ws, 'sub', aside, 'tasks.json'), 'utf8'), 'x\n', 'set aside whole, nothing lost');
    assert.match(hit.text, /Set aside \(renamed\), as a command may not create protected paths: .*sub\/\.vscode/);
    const again = await run('mv sub/.vscode.sandbox-blocked-* sub/.vscode; echo back');
    assert.match(again.stdout, /back/);
    assert.equal(existsSync(join(ws, 'sub', '.vscode')), false, 'renaming it back is a creation too');
  });

  it('thousands of folders made by one command hide no sub-repository: what the walk found before stays guarded; a cut walk leaves older paths alone and says so once', async () => {
    mkdirSync(join(ws, 'v', 'w', 'x', 'lib', '.git', 'hooks'), { recursive: true });
    mkdirSync(join(ws, 'v', 'w', 'x', 'lib2', '.vscode'), { recursive: true });
    const fill = await run(`mkdir aa && seq 1 ${WALK_LIMIT + 10} | sed 's|^|aa/d|' | xargs mkdir && echo filled`);
    assert.match(fill.stdout, /filled/);
    const hit = await run('echo evil > v/w/x/lib/.git/hooks/pre-commit; echo done');
    assert.match(hit.stdout, /done/);
    assert.equal(existsSync(join(ws, 'v', 'w', 'x', 'lib', '.git', 'hooks', 'pre-commit')), false, 'the sub-repository stays read-only');
    assert.match(hit.text, /more than 5000 folders/);
    assert.equal(existsSync(join(ws, 'v', 'w', 'x', 'lib2', '.vscode')), true, 'an older protected path past the cut walk is not touched');
    const later = await run('echo later');
    assert.doesNotMatch(later.text, /more than 5000 folders/, 'said once');
  });

  it('a nested git folder (a sub-repository) is read-only too; descriptors the host inherited are closed', async () => {
    mkdirSync(join(ws, 'vendor', 'lib', '.git', 'hooks'), { recursive: true });
    const hit = await run('echo evil > vendor/lib/.git/hooks/pre-commit; ls /proc/self/fd | tr "\\n" " "; echo');
    assert.equal(existsSync(join(ws, 'vendor', 'lib', '.git', 'hooks', 'pre-commit')), false);
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
