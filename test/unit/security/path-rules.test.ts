import { linksWork } from '../../support/links';
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ABSENT } from '../../../src/core/patches/hash';
import { PathRefusedError } from '../../../src/core/ports';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { WorkspacePaths } from '../../../src/host/node/path-rules';
import { tempDir } from '../runtime/harness';

const bytes = new TextEncoder().encode('escaped\n');

describe('one set of path rules: no write through a symlink that dangles or leads outside', () => {
  let root: string;
  let outside: string;
  let ws: NodeWorkspace;
  beforeEach(function () {
    root = tempDir('rules-ws');
    outside = tempDir('rules-outside');
    ws = new NodeWorkspace({ roots: [root] });
    if (process.platform === 'win32' && !linksWork(root)) this.skip(); // Wine makes no links: not proven under Windows here
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  async function refused(path: string, reason: RegExp): Promise<void> {
    await assert.rejects(ws.write(path, bytes, ABSENT), (error: unknown) => {
      assert.ok(error instanceof PathRefusedError, String(error));
      assert.match(error.message, reason);
      return true;
    });
  }

  it('a file that is a dangling link to outside is refused and nothing is created outside', async () => {
    symlinkSync(join(outside, 'created-by-agent.txt'), join(root, 'escape.txt'));
    await refused('escape.txt', /symlink that dangles/);
    assert.equal(existsSync(join(outside, 'created-by-agent.txt')), false);
    await assert.rejects(ws.normalize('escape.txt'), /dangles/);
  });

  it('a parent folder that is a dangling link is refused, and so is a dangling link that points inside', async () => {
    symlinkSync(join(outside, 'no-such-dir'), join(root, 'dir'));
    await refused('dir/new.txt', /symlink that dangles/);
    assert.equal(existsSync(join(outside, 'no-such-dir')), false);
    symlinkSync(join(root, 'not-yet.txt'), join(root, 'inner-link'));
    await refused('inner-link', /dangles/);
    assert.equal(existsSync(join(root, 'not-yet.txt')), false);
  });

  it('a link leading outside, .git in any case and the store are refused; ordinary paths pass', async () => {
    mkdirSync(join(outside, 'real'));
    symlinkSync(join(outside, 'real'), join(root, 'out'));
    await refused('out/x.txt', /outside every workspace folder/);
    mkdirSync(join(root, '.GIT'));
    await refused('.GIT/config', /\.git\/` is never touched/);
    const store = join(root, 'store');
    const paths = new WorkspacePaths([root], store);
    await assert.rejects(paths.resolve('store/runs/x'), /inside the checkpoint store/);
    writeFileSync(join(root, 'ok.txt'), 'ok');
    assert.equal((await paths.resolve('ok.txt')).relative, 'ok.txt');
    assert.equal((await paths.resolve('new/dir/file.txt')).relative, 'new/dir/file.txt');
    assert.equal((await paths.resolve('.')).isFolder, true);
  });
});
