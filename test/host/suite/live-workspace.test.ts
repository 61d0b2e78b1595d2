import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import * as vscode from 'vscode';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import { PathRefusedError, silentLog, StaleContentError } from '../../../src/core/ports';
import { LiveWorkspace } from '../../../src/host/vscode/window/live-workspace';
import { extensionApi, workspaceRoot, writeWorkspaceFile } from './helpers';

const utf8 = new TextEncoder();

export function liveWorkspaceSuite(): void {
  describe('LiveWorkspace (the Workspace port over VS Code)', () => {
    let ws: LiveWorkspace;
    before(async () => {
      const api = await extensionApi();
      ws = new LiveWorkspace([workspaceRoot()], api.storagePath, silentLog);
    });
    after(async () => {
      await vscode.commands.executeCommand('workbench.action.files.revert');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    });

    it('reads an open buffer with its unsaved edits, and disk otherwise', async () => {
      const uri = await writeWorkspaceFile('lw/read.txt', 'disk\n');
      assert.deepEqual((await ws.read('lw/read.txt'))?.source, 'disk');
      const doc = await vscode.workspace.openTextDocument(uri);
      const editor = await vscode.window.showTextDocument(doc);
      await editor.edit((b) => b.insert(new vscode.Position(0, 0), 'unsaved '));
      const live = await ws.read('lw/read.txt');
      assert.equal(live?.source, 'buffer');
      assert.equal(live?.dirty, true);
      assert.equal(live?.hash, hashContent(utf8.encode('unsaved disk\n')));
      await vscode.commands.executeCommand('workbench.action.files.revert');
    });

    it('refuses a write whose expected hash is not the live content', async () => {
      await writeWorkspaceFile('lw/stale.txt', 'v1\n');
      await assert.rejects(ws.write('lw/stale.txt', utf8.encode('v2\n'), hashContent(utf8.encode('older\n'))), StaleContentError);
      await assert.rejects(ws.write('lw/stale.txt', utf8.encode('v2\n'), ABSENT), StaleContentError);
      assert.equal(await fs.readFile(nodePath.join(workspaceRoot(), 'lw/stale.txt'), 'utf8'), 'v1\n');
      const written = await ws.write('lw/stale.txt', utf8.encode('v2\n'), hashContent(utf8.encode('v1\n')));
      assert.equal(written.hash, hashContent(utf8.encode('v2\n')));
    });

    it('creates and deletes files that are not open', async () => {
      const created = await ws.write('lw/new/deep.txt', utf8.encode('new\n'), ABSENT);
      assert.equal(created.source, 'disk');
      await ws.delete('lw/new/deep.txt', created.hash);
      assert.equal(await ws.read('lw/new/deep.txt'), null);
    });

    it('reads and sets the executable bit on disk, other bits kept, and refuses a bit the person changed', async () => {
      await writeWorkspaceFile('lw/tool.sh', '#!/bin/sh\n');
      const abs = nodePath.join(workspaceRoot(), 'lw/tool.sh');
      await fs.chmod(abs, 0o640);
      assert.equal(await ws.executable?.('lw/tool.sh'), false);
      assert.equal(await ws.executable?.('lw/none.sh'), null);
      await ws.setExecutable?.('lw/tool.sh', true, false);
      assert.equal((await fs.stat(abs)).mode & 0o777, 0o750, 'x where readable');
      await assert.rejects(ws.setExecutable!('lw/tool.sh', false, false), StaleContentError);
      await ws.setExecutable?.('lw/tool.sh', false, true);
      assert.equal((await fs.stat(abs)).mode & 0o777, 0o640);
    });

    it('refuses paths outside the folder, into .git or the store, and symlink escapes', async () => {
      const api = await extensionApi();
      const outside = await fs.mkdtemp(nodePath.join(tmpdir(), 'agent-host-outside-'));
      await fs.symlink(outside, nodePath.join(workspaceRoot(), 'lw-escape')).catch(() => undefined);
      for (const path of ['../x.txt', '.git/config', 'lw-escape/secret.txt', '/etc/passwd', nodePath.join(api.storagePath, 'runs/x')]) {
        await assert.rejects(ws.write(path, utf8.encode('x'), ABSENT), PathRefusedError, path);
      }
      assert.equal(await ws.normalize('.'), '.');
      assert.ok((await ws.list('.')).some((e) => e.name === 'lw'));
    });
  });
}
