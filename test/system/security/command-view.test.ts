import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashContent } from '../../../src/core/patches/hash';
import { applyPreparedWrite } from '../../../src/core/patches/record';
import type { Patch } from '../../../src/core/patches/schema';
import type { CommandResult, LiveFile, Workspace } from '../../../src/core/ports';
import { rollbackFiles } from '../../../src/core/restore/rollback';
import { applyCommandChanges } from '../../../src/core/tools/command-changes';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import type { PreparedWrite, ToolContext } from '../../../src/core/tools/types';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { detectSandbox, noViewReason, type SandboxRequest } from '../../../src/host/node/sandbox/index';
import { tempDir } from '../../unit/runtime/harness';
import { stagedTempPid } from '../../../src/host/node/staged-temps';
import { applyToDisk } from './sandbox-support';
import { MemoryBlobs, MemoryJournal, MemoryLog, fixedClock, newId } from '../../unit/patches/fakes';

// A command's changes come back as a change set of its copy-on-write view and become patches of
// its call through the workspace port (checked against the live content), restorable like edits.

const kind = detectSandbox();
const FILES: Record<string, string> = {
  'a.txt': 'one\ntwo\n',
  'del.txt': 'gone soon\n',
  'mv-src.txt': 'moving\n',
  'script.sh': '#!/bin/sh\necho hi\n',
  'sub/x.txt': 'x\n',
  'sub/keep.txt': 'keep\n',
  '.gitignore': 'build/\n',
};

describe('run_command: what a command changes becomes patches of its call', function () {
  this.timeout(30_000);
  let base = '';
  let ws = '';
  let views = '';
  let request: Partial<SandboxRequest> = {};
  let env: NodeJS.ProcessEnv = {};
  const blobs = new MemoryBlobs();
  let patches: Patch[] = [];

  before(function () {
    const probe = tempDir('view-probe');
    mkdirSync(join(probe, 'ws'));
    const probing = { roots: [join(probe, 'ws')], protectedPaths: [], hidden: [], homePaths: [], network: false, views: join(probe, 'v') };
    const why = noViewReason(kind, probing);
    rmSync(probe, { recursive: true, force: true });
    if (why !== undefined) {
      console.log(`      (skipped: no copy-on-write view here: ${why})`);
      this.skip();
    }
  });

  beforeEach(() => {
    base = tempDir('view');
    ws = join(base, 'ws');
    views = join(base, 'store', 'command-views');
    for (const [path, content] of Object.entries(FILES)) {
      mkdirSync(join(ws, path, '..'), { recursive: true });
      writeFileSync(join(ws, path), content);
    }
    writeFileSync(join(ws, 'bin.dat'), Buffer.from([0, 1, 2, 3, 255]));
    request = {};
    env = { PATH: process.env['PATH'], HOME: base };
    patches = [];
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  /** A context whose applyWrite records a patch as the runtime does (blobs and all), over `workspace`. */
  function contextOver(workspace: Workspace): ToolContext {
    return {
      workspace,
      async applyWrite(write: PreparedWrite): Promise<Patch> {
        const patch = await applyPreparedWrite(
          { workspace, blobs, clock: fixedClock, log: new MemoryLog(), newId },
          { runId: 'r', stepId: 1, toolCallId: 'call-1' },
          write,
        );
        patches.push(patch);
        return patch;
      },
    } as unknown as ToolContext;
  }

  async function run(
    command: string,
    workspace: Workspace = new NodeWorkspace({ roots: [ws], ripgrep: null }),
  ): Promise<CommandResult & { text: string }> {
    const runner = createNodeCommandRunner({
      env,
      sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views, ...request }),
    });
    const result = await runner.run(command, { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 64 * 1024 });
    const changes = result.changes !== undefined ? await applyCommandChanges(contextOver(workspace), result.changes) : undefined;
    await result.changes?.discard();
    return { ...result, text: formatCommandResult(result, changes) };
  }

  const read = (path: string): string => readFileSync(join(ws, path), 'utf8');

  it('sed -i, a new file, rm, mv of a file, chmod +x, a binary write: patches of the call, and a rollback brings back every byte', async () => {
    const hit = await run(
      "sed -i s/two/TWO/ a.txt && echo new > new.txt && rm del.txt && mv mv-src.txt moved.txt && chmod +x script.sh && touch sub/x.txt && printf '\\001\\000\\377' > bin.dat && echo done",
    );
    assert.match(hit.stdout, /done/, hit.text);
    assert.equal(read('a.txt'), 'one\nTWO\n');
    assert.equal(read('new.txt'), 'new\n');
    assert.equal(existsSync(join(ws, 'del.txt')), false);
    assert.equal(read('moved.txt'), 'moving\n');
    assert.notEqual(statSync(join(ws, 'script.sh')).mode & 0o100, 0, 'chmod +x reached the file');
    assert.deepEqual(
      patches.map((p) => `${p.op} ${p.path}`).sort(),
      ['create moved.txt', 'create new.txt', 'delete del.txt', 'delete mv-src.txt', 'modify a.txt', 'modify bin.dat', 'modify script.sh'],
      'touch leaves no patch; chmod +x leaves a mode-only one',
    );
    const chmod = patches.find((p) => p.path === 'script.sh')!;
    assert.deepEqual([chmod.beforeHash === chmod.afterHash, chmod.execBefore, chmod.execAfter], [true, false, true]);
    assert.ok(patches.every((p) => p.toolCallId === 'call-1'));
    assert.match(hit.text, /--- workspace changes ---\nApplied as patches of this call/);
    assert.match(hit.text, /R mv-src\.txt -> moved\.txt/);
    assert.match(hit.text, /M bin\.dat \(binary\)/);
    assert.match(hit.text, /M script\.sh \(made executable\)/);
    assert.doesNotMatch(hit.text, /mode changed/);
    const journal = new MemoryJournal();
    await rollbackFiles(
      { workspace: new NodeWorkspace({ roots: [ws], ripgrep: null }), blobs, journal, clock: fixedClock, log: new MemoryLog(), newId },
      { patches, allCheckpoints: [] },
      { kind: 'run' },
    );
    for (const [path, content] of Object.entries(FILES)) assert.equal(read(path), content, path);
    assert.deepEqual([...readFileSync(join(ws, 'bin.dat'))], [0, 1, 2, 3, 255]);
    assert.equal(statSync(join(ws, 'script.sh')).mode & 0o111, 0, 'and the executable bit');
    assert.equal(existsSync(join(ws, 'new.txt')), false);
    assert.equal(existsSync(join(ws, 'moved.txt')), false);
  });

  it('chmod 600 changes no executable bit: dropped by design (patches hold only that bit), no patch, the file keeps its mode', async () => {
    const mode = statSync(join(ws, 'a.txt')).mode & 0o777;
    assert.notEqual(mode, 0o600);
    const hit = await run('chmod 600 a.txt && echo done');
    assert.match(hit.stdout, /done/, hit.text);
    assert.deepEqual(patches, []);
    assert.equal(statSync(join(ws, 'a.txt')).mode & 0o777, mode);
    assert.doesNotMatch(hit.text, /workspace changes/);
  });

  it('ignored paths are placed without patches and summarised; a folder removed and made again loses what the command removed', async () => {
    const hit = await run('mkdir -p build/out && echo b > build/out/x.js && rm -rf sub && mkdir sub && echo y > sub/y.txt && echo done');
    assert.match(hit.stdout, /done/, hit.text);
    assert.equal(read('build/out/x.js'), 'b\n');
    assert.deepEqual(readdirSync(join(ws, 'sub')), ['y.txt']);
    assert.deepEqual(patches.map((p) => `${p.op} ${p.path}`).sort(), ['create sub/y.txt', 'delete sub/keep.txt', 'delete sub/x.txt']);
    assert.match(hit.text, /Ignored paths[^\n]*: 1 paths \(2 bytes\) placed in the workspace without patches[^\n]*under: build/);
  });

  it('a new ignored folder goes to the workspace whole (counted file by file); one holding a nested .git is placed path by path, its .git refused', async () => {
    const hit = await run(
      'mkdir -p node_modules/a/lib node_modules/b && echo 1 > node_modules/a/lib/x.js && echo 22 > node_modules/b/y.js && ' +
        'mkdir -p build/dep/.git && echo c > build/dep/.git/config && echo d > build/dep/d.js',
    );
    assert.equal(read('node_modules/a/lib/x.js'), '1\n');
    assert.equal(read('node_modules/b/y.js'), '22\n');
    assert.equal(read('build/dep/d.js'), 'd\n');
    assert.equal(existsSync(join(ws, 'build/dep/.git')), false, 'a .git in a new ignored folder is refused all the same');
    assert.deepEqual(
      hit.changes?.refused.map((r) => r.path),
      ['build/dep/.git/config'],
    );
    assert.match(
      hit.text,
      /Ignored paths[^\n]*: 3 paths \(7 bytes\) placed in the workspace without patches[^\n]*under: (node_modules, build|build, node_modules)/,
    );
    assert.deepEqual(patches, []);
  });

  it("the person's unsaved edit wins: the file is named as a conflict and left alone", async () => {
    const disk = new NodeWorkspace({ roots: [ws], ripgrep: null });
    const typed = new TextEncoder().encode('one\ntwo\nmine, unsaved\n');
    const buffers: Workspace = Object.assign(Object.create(disk) as Workspace, {
      async read(path: string): Promise<LiveFile | null> {
        const live = await disk.read(path);
        if (live === null || live.path !== 'a.txt') return live;
        return { ...live, bytes: typed, hash: hashContent(typed), source: 'buffer', dirty: true };
      },
    });
    const hit = await run('sed -i s/one/ONE/ a.txt && echo n > n.txt', buffers);
    assert.equal(read('a.txt'), 'one\ntwo\n', 'the command did not write over the buffer');
    assert.match(
      hit.text,
      /Not applied \(conflict[^\n]*\n\s+\S*a\.txt: it differs from what the command started from[^\n]*your version was kept/,
    );
    assert.deepEqual(
      patches.map((p) => p.path),
      ['n.txt'],
    );
  });

  it('a file the person saves while the command runs is a conflict, never overwritten', async () => {
    const pending = run('sleep 0.4; echo command > a.txt');
    await new Promise((resolve) => setTimeout(resolve, 150));
    writeFileSync(join(ws, 'a.txt'), 'saved by the person\n');
    const hit = await pending;
    assert.equal(read('a.txt'), 'saved by the person\n');
    assert.match(hit.text, /a\.txt was changed while the command ran/);
    assert.deepEqual(patches, []);
  });

  it('two commands at once that change one file: one is applied, the other is a conflict, never a silent overwrite', async () => {
    const [first, second] = await Promise.all([run('sleep 0.3; echo first >> a.txt'), run('sleep 0.3; echo second >> a.txt')]);
    const texts = [first!.text, second!.text];
    assert.equal(texts.filter((t) => /M a\.txt/.test(t)).length, 1, texts.join('\n----\n'));
    assert.equal(texts.filter((t) => /Not applied \(conflict[\s\S]*a\.txt/.test(t)).length, 1, texts.join('\n----\n'));
    assert.match(read('a.txt'), /^one\ntwo\n(first|second)\n$/);
    assert.equal(patches.length, 1);
  });

  it('past the bound the change set is too large to track: placed without patches, and the result says so', async () => {
    request = { trackLimit: { files: 2, bytes: 1024 * 1024 } };
    const hit = await run('echo 1 > f1 && echo 2 > f2 && echo 3 > f3');
    assert.equal(read('f3'), '3\n');
    assert.deepEqual(patches, []);
    assert.match(hit.text, /Too large to track \(3 files, 6 bytes; the bound is 2 files/);
  });

  it('renaming an existing folder fails with EXDEV in the view (mv copies instead), as the tool description says', async () => {
    const hit = await run(`node -e "require('fs').renameSync('sub','sub2')" 2>&1 | grep -o EXDEV; mv sub sub3 && echo moved`);
    assert.match(hit.stdout, /EXDEV\nmoved/, hit.text);
    assert.equal(read('sub3/x.txt'), 'x\n');
    assert.equal(existsSync(join(ws, 'sub')), false);
  });

  it('forced without a view (AGENT_CHECKPOINTS_NO_OVERLAY=1): the command writes in place, and a scan names what it changed, said in the result', async () => {
    env = { ...env, AGENT_CHECKPOINTS_NO_OVERLAY: '1' };
    const hit = await run('echo changed > a.txt && echo n > n.txt && rm del.txt');
    assert.equal(read('a.txt'), 'changed\n');
    assert.equal(hit.changes?.via, 'scan');
    assert.deepEqual(patches, []);
    assert.match(hit.text, /No copy-on-write view here \(AGENT_CHECKPOINTS_NO_OVERLAY=1 is set\)[^\n]*not patches/);
    assert.match(hit.text, /M \S*a\.txt/);
    assert.match(hit.text, /A \S*n\.txt/);
    assert.match(hit.text, /D \S*del\.txt/);
    assert.equal(existsSync(views) ? readdirSync(views).length : 0, 0);
  });

  it('a workspace folder of another owner gets no view (EOVERFLOW on copy-up): the command is scanned, and the result says why', async function () {
    if (process.getuid?.() !== 0) this.skip(); // giving a folder away takes root
    spawnSync('chown', ['1234:1234', ws]);
    const hit = await run('echo changed > a.txt');
    assert.equal(read('a.txt'), 'changed\n');
    assert.equal(hit.changes?.via, 'scan');
    assert.match(
      hit.text,
      /No copy-on-write view here \(the workspace folder \S+ belongs to another owner \(uid 1234, gid 1234[^\n]*EOVERFLOW/,
    );
  });

  it('a file of another owner inside: the command meets EOVERFLOW, the result says so, and the next commands go without a view', async function () {
    if (process.getuid?.() !== 0) this.skip();
    spawnSync('chmod', ['666', join(ws, 'a.txt')]);
    spawnSync('chown', ['1234:1234', join(ws, 'a.txt')]);
    const first = await run('echo more >> a.txt; echo n > n.txt');
    assert.equal(read('a.txt'), 'one\ntwo\n', 'not changed in the view');
    assert.match(
      first.text,
      /A copy-on-write view could not serve this command: a file or folder of another owner[^\n]*EOVERFLOW[^\n]*Later commands of this run go without a view/,
    );
    assert.equal(read('n.txt'), 'n\n', 'what the command could change was applied');
    const runner = createNodeCommandRunner({
      env,
      sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views }),
    });
    const failed = await runner.run('echo more >> a.txt', { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 1024 });
    await failed.changes?.discard();
    assert.notEqual(failed.exitCode, 0);
    const next = await runner.run('echo more >> a.txt', { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 1024 });
    assert.equal(next.exitCode, 0, next.stderr);
    assert.equal(next.changes?.via, 'scan');
    assert.equal(read('a.txt'), 'one\ntwo\nmore\n');
  });

  it('without a view, a protected path the command created (at the top, ignored or not, or nested) is moved out of the workspace and named', async () => {
    env = { ...env, AGENT_CHECKPOINTS_NO_OVERLAY: '1' };
    writeFileSync(join(ws, '.gitignore'), 'build/\n.envrc\n');
    const hit = await run(
      'mkdir -p .vscode sub/.vscode && echo t > .vscode/tasks.json && echo e > .envrc && echo s > sub/.vscode/settings.json && echo ok > ok.txt',
    );
    assert.equal(existsSync(join(ws, '.vscode')), false);
    assert.equal(existsSync(join(ws, '.envrc')), false, 'an ignored protected path too');
    assert.equal(existsSync(join(ws, 'sub', '.vscode', 'settings.json')), false);
    assert.equal(read('ok.txt'), 'ok\n', 'what is not protected stays where the command wrote it');
    const refused = hit.changes?.refused.map((r) => r.path.slice(ws.length + 1)).sort();
    assert.deepEqual(refused, ['.envrc', '.vscode', 'sub/.vscode/settings.json']);
    assert.match(hit.text, /\.vscode: a protected path the command created without a copy-on-write view; moved out of the workspace to /);
    const moved = /moved out of the workspace to (\S+)/.exec(hit.text)?.[1];
    assert.ok(moved !== undefined && moved.startsWith(views), `moved into the views' folder, hidden from commands: ${moved}`);
  });

  it('a host killed at any of several instants of a command (running, capturing, applying) leaves nothing new but what the command made; its view is settled at the next open, once', async () => {
    const made = (name: string): boolean =>
      /^f\d+\.txt$/.test(name) || Object.keys(FILES).some((f) => f.split('/')[0] === name) || name === 'bin.dat';
    const child = join(base, 'killed.ts');
    const support = join(__dirname, 'sandbox-support');
    const runner = join(__dirname, '../../../src/host/node/command-runner');
    let settled = 0;
    for (const instant of [30, 120, 250, 400, 700]) {
      const sandbox = { roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views };
      writeFileSync(
        child,
        `import { createNodeCommandRunner } from ${JSON.stringify(runner)};\n` +
          `import { applyToDisk } from ${JSON.stringify(support)};\n` +
          `const r = createNodeCommandRunner({ sandbox: () => (${JSON.stringify(sandbox)}) });\n` +
          `void r.run('for i in $(seq 1 40); do echo $i > f$i.txt; done; echo x > .envrc; sleep 0.2', { cwd: ${JSON.stringify(ws)}, timeoutMs: 60000, maxOutputBytes: 1024, callId: 'call_${instant}' })` +
          `.then((result) => applyToDisk([${JSON.stringify(ws)}], result.changes));\n` +
          `setTimeout(() => process.kill(process.pid, "SIGKILL"), ${instant});\n`,
      );
      spawnSync(process.execPath, ['--import', 'tsx', child], { stdio: 'ignore' });
      const check = (when: string, staged: boolean): void => {
        // Right after the kill, the workspace write path's staged file (NodeWorkspace, write_file's too) may be
        // there, cut between its write and its rename; the settle writes that folder, which removes it.
        const strangers = readdirSync(ws).filter((name) => !made(name) && !(staged && stagedTempPid(name) !== undefined));
        assert.deepEqual(strangers, [], `killed at ${instant} ms, ${when}`);
        // The loop's files hold their numbers; the last one may be empty: a kill between `>`'s truncation and the echo's write.
        const numbered = readdirSync(ws).filter((n) => /^f\d+\.txt$/.test(n));
        const last = Math.max(0, ...numbered.map((n) => Number(n.slice(1, -4))));
        for (const name of numbered) {
          const cut = name === `f${last}.txt` && read(name) === '';
          if (!cut) assert.equal(read(name), `${name.slice(1, -4)}\n`, name);
        }
      };
      check('after the kill', true);
      const next = createNodeCommandRunner({ sandbox: () => sandbox });
      const left = await next.recover!(`call_${instant}`);
      if (left !== undefined) settled += 1;
      await applyToDisk([ws], left);
      check('after the settle', false);
      assert.equal(await next.recover!(`call_${instant}`), undefined, 'settled once');
    }
    assert.ok(settled > 0, 'some kill cut a command whose view held changes');
    createNodeCommandRunner({ sandbox: () => ({ roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false, views }) });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(existsSync(views) ? readdirSync(views) : [], [], 'every view swept at the next start');
  });
});
