import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { skipWithoutViews } from '../../support/cow-views';
import { tempDir } from '../../unit/runtime/harness';

// A person with subordinate ids (/etc/subuid, /etc/subgid: what rootless containers write files as)
// gets copy-on-write views that map them (newuidmap/newgidmap through unshare): a file of such an id
// is changed in the view and reaches the workspace as a patch. A file of an id outside every mapped
// range still meets EOVERFLOW, and the runner's later commands fall back to the scan, said in the
// result. Proven as a throwaway user (made here as root, removed after), running the runner itself.

const CHILD = join(__dirname, 'subids-child.ts');
const NAME = `acsub${process.pid % 1_000_000}`;
const START = 2_000_000_000 + (process.pid % 10_000) * 65_536;
const COUNT = 65_536;

const onPath = (tool: string): boolean => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;

function dropLines(file: string): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  writeFileSync(file, lines.filter((line) => !line.startsWith(`${NAME}:`)).join('\n'));
}

interface Step {
  exitCode: number;
  stderr: string;
  sandboxNote?: string;
  via?: 'view' | 'scan';
  notes: string[];
  applied?: string;
}

describe('copy-on-write views with subordinate ids (a throwaway user with a subuid/subgid range)', function () {
  this.timeout(60_000);
  let uid = -1;
  let base = '';
  /** The child, bundled where the throwaway user can read it: the checkout may sit in a folder only root can enter (a clone under a 0700 temp folder). */
  let child = '';

  before(function () {
    const missing = process.getuid?.() !== 0 ? 'making a throwaway user takes root' : !onPath('useradd') ? 'useradd is missing' : undefined;
    const noUidmap = ['newuidmap', 'newgidmap'].some((tool) => !onPath(tool));
    const why =
      missing ??
      (noUidmap ? 'uidmap (newuidmap/newgidmap) is not installed: apt-get install uidmap (test/bootstrap.mjs does, as root)' : undefined);
    if (why !== undefined) {
      console.log(`      (skipped: ${why})`);
      this.skip();
    }
    skipWithoutViews(this);
    const bundle = tempDir('subids-child');
    chmodSync(bundle, 0o755);
    child = join(bundle, 'child.cjs');
    buildSync({ entryPoints: [CHILD], bundle: true, platform: 'node', format: 'cjs', outfile: child, logLevel: 'error' });
    chmodSync(child, 0o644);
    const made = spawnSync('useradd', ['-M', '-s', '/bin/sh', NAME], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    uid = Number(spawnSync('id', ['-u', NAME], { encoding: 'utf8' }).stdout.trim());
    // useradd gives a new user a range of its own where these files exist: replaced by ours.
    for (const file of ['/etc/subuid', '/etc/subgid']) {
      dropLines(file);
      writeFileSync(file, `${NAME}:${START}:${COUNT}\n`, { flag: 'a' });
    }
  });

  after(() => {
    if (uid < 0) return;
    for (const file of ['/etc/subuid', '/etc/subgid']) dropLines(file);
    spawnSync('userdel', [NAME]);
  });

  beforeEach(() => {
    base = tempDir('subids');
    chmodSync(base, 0o755);
    for (const dir of ['ws', 'store']) {
      mkdirSync(join(base, dir));
      chownSync(join(base, dir), uid, uid);
    }
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  /** Writes `path` in the workspace, owned by `owner` (uid and gid), mode 666 (so the command may write it). */
  function fileOf(path: string, owner: number, content = 'one\n'): void {
    writeFileSync(join(base, 'ws', path), content, { mode: 0o666 });
    chmodSync(join(base, 'ws', path), 0o666);
    chownSync(join(base, 'ws', path), owner, owner);
  }

  /** Runs the commands as the throwaway user through one runner: a result per command, then what the views folder holds. */
  function asUser(commands: string[], path = process.env['PATH']): { steps: Step[]; viewsLeft: string[] } {
    const run = spawnSync(
      'runuser',
      ['-u', NAME, '--', process.execPath, child, join(base, 'ws'), join(base, 'store', 'views'), ...commands],
      { cwd: base, encoding: 'utf8', timeout: 40_000, env: { PATH: path, HOME: base } },
    );
    assert.equal(run.status, 0, `${run.stderr}\n${run.stdout}`);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Step & { viewsLeft?: string[] });
    return { steps: lines.slice(0, -1), viewsLeft: lines.at(-1)?.viewsLeft ?? [] };
  }

  const read = (path: string): string => readFileSync(join(base, 'ws', path), 'utf8');

  it('files of ids in the range (and a folder whose group is one) are changed in the view and applied as patches; the view is removed', () => {
    chownSync(join(base, 'ws'), uid, START + 7); // a group of the range: the folder check lets the view serve it
    chmodSync(join(base, 'ws'), 0o775);
    fileOf('shared.txt', START + 999);
    mkdirSync(join(base, 'ws', 'sub'), { mode: 0o777 });
    chmodSync(join(base, 'ws', 'sub'), 0o777);
    chownSync(join(base, 'ws', 'sub'), START + 500, START + 500);
    fileOf('sub/g.txt', START + 500);
    // A folder the person cannot write: touch copies it up (no change to apply); only the view's ids can empty its copy.
    mkdirSync(join(base, 'ws', 'locked'));
    fileOf('locked/l.txt', START + 500);
    chownSync(join(base, 'ws', 'locked'), START + 500, START + 500);
    const { steps, viewsLeft } = asUser(['echo two >> shared.txt && echo two >> sub/g.txt && touch locked/l.txt && echo done']);
    const [step] = steps;
    assert.equal(step?.exitCode, 0, JSON.stringify(step));
    assert.equal(step.via, 'view', JSON.stringify(step));
    assert.doesNotMatch(`${step.sandboxNote ?? ''}${step.notes.join('\n')}`, /copy-on-write view (could not|here)/);
    assert.match(step.applied ?? '', /Applied as patches of this call[^]*shared\.txt[^]*sub\/g\.txt/);
    assert.equal(read('shared.txt'), 'one\ntwo\n');
    assert.equal(read('sub/g.txt'), 'one\ntwo\n');
    assert.deepEqual(viewsLeft, [], 'the view, its copied-up folder of a subordinate id included, is gone');
  });

  it('a file of an id outside the range meets EOVERFLOW, said with what is mapped; the next command falls back to the scan, said', () => {
    fileOf('other.txt', START - 1);
    const { steps, viewsLeft } = asUser(['echo two >> other.txt', 'echo two >> other.txt']);
    const [first, second] = steps;
    assert.ok(first !== undefined && second !== undefined, JSON.stringify(steps));
    assert.notEqual(first.exitCode, 0, JSON.stringify(first));
    assert.match(
      first.sandboxNote ?? '',
      new RegExp(
        `A copy-on-write view could not serve this command: a file or folder of another owner[^\\n]*EOVERFLOW: its user namespace maps uid ${uid}, gid \\d+ and subordinate uids ${START}-${START + COUNT - 1}, subordinate gids ${START}-[^\\n]*Later commands of this run go without a view`,
      ),
    );
    assert.equal(second.exitCode, 0, JSON.stringify(second));
    assert.equal(second.via, 'scan');
    assert.match(second.notes[0] ?? '', /No copy-on-write view here \(a file or folder of another owner[^\n]*EOVERFLOW[^\n]*not patches/);
    assert.equal(read('other.txt'), 'one\ntwo\n', 'one append: the scanned one; none from the command that met EOVERFLOW');
    assert.deepEqual(viewsLeft, []);
  });

  it('where newuidmap refuses the range, views map the person’s own ids only: their files still get a view, a file of the range meets EOVERFLOW, said', () => {
    const fake = join(base, 'fake-bin');
    mkdirSync(fake);
    for (const tool of ['newuidmap', 'newgidmap'])
      writeFileSync(join(fake, tool), '#!/bin/sh\necho "$0: refused" >&2\nexit 1\n', { mode: 0o755 });
    writeFileSync(join(base, 'ws', 'mine.txt'), 'one\n');
    chownSync(join(base, 'ws', 'mine.txt'), uid, uid);
    fileOf('shared.txt', START + 999);
    const { steps } = asUser(['echo two >> mine.txt', 'echo two >> shared.txt'], `${fake}:${process.env['PATH'] ?? ''}`);
    const [own, sub] = steps;
    assert.ok(own !== undefined && sub !== undefined, JSON.stringify(steps));
    assert.equal(own.via, 'view', JSON.stringify(own));
    assert.match(own.applied ?? '', /Applied as patches of this call[^]*mine\.txt/);
    assert.equal(read('mine.txt'), 'one\ntwo\n');
    assert.notEqual(sub.exitCode, 0);
    assert.match(
      sub.sandboxNote ?? '',
      new RegExp(
        `EOVERFLOW: its user namespace maps uid ${uid}, gid \\d+ only \\(newuidmap/newgidmap refused your subordinate ids: [^)]*refused`,
      ),
    );
    assert.equal(read('shared.txt'), 'one\n');
  });
});
