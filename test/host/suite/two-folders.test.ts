import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import * as vscode from 'vscode';
import type { TimelineChange } from '../../../src/host/vscode/timeline/backend';
import { extensionApi, finalAnswer, toolUse, useFakeModel, waitFor } from './helpers';

// A workspace of two folders (`app`, then `lib`): every surface names an editor's file by the
// agent's path rules (the first folder's files bare, another folder's by its name), so a change
// in the second folder is reviewed in its editor and a file of the first folder has its live state.

async function write(folder: number, relative: string, text: string): Promise<vscode.Uri> {
  const root = vscode.workspace.workspaceFolders![folder]!.uri.fsPath;
  const path = nodePath.join(root, relative);
  await fs.mkdir(nodePath.dirname(path), { recursive: true });
  await fs.writeFile(path, text);
  return vscode.Uri.file(path);
}

const lensTitles = async (uri: vscode.Uri) =>
  ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? []).map((l) => l.command?.title);

export function twoFoldersSuite(): void {
  describe('a workspace of two folders', () => {
    afterEach(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

    it("reviews a change in the second folder, reads the first folder's live state; a file outside every folder and an untitled buffer are no workspace file", async () => {
      assert.deepEqual(
        vscode.workspace.workspaceFolders?.map((f) => f.name),
        ['app', 'lib'],
      );
      const api = await extensionApi();
      const first = await write(0, 'notes/a.txt', 'a1\na2\n');
      const second = await write(1, 'src/b.txt', 'b1\nb2\nb3\n');
      const fake = await useFakeModel(api, [
        toolUse('toolu_two_a', 'edit_file', { path: 'notes/a.txt', old_string: 'a2', new_string: 'A2' }),
        toolUse('toolu_two_b', 'edit_file', { path: 'lib/src/b.txt', old_string: 'b2', new_string: 'B2' }),
        finalAnswer('ok'),
      ]);
      const changes: TimelineChange[] = [];
      const sub = api.timelineBackend.onDidChange((c) => changes.push(c));
      try {
        const started = await vscode.commands.executeCommand<{ runId: string }>('agentCheckpoints.run', { task: 'Edit both folders' });
        assert.equal((await api.whenIdle())?.status, 'completed');
        const runId = started.runId;
        const patches = (await api.timelineBackend.readRun(runId)).patches;
        assert.deepEqual(patches.map((p) => p.path).sort(), ['lib/src/b.txt', 'notes/a.txt']);
        assert.equal(api.timelineBackend.fileUri('lib/src/b.txt')?.fsPath, second.fsPath);

        // The second folder's change: marked and offered for Keep / Undo in its editor.
        await api.review.settled();
        await vscode.window.showTextDocument(second);
        await waitFor('the mark in the second folder', () => api.review.marksOf(second)?.modified.includes(1) || undefined);
        assert.ok((await lensTitles(second)).includes('$(check) Keep'), 'Keep above the hunk in the second folder');
        const patchB = patches.find((p) => p.path === 'lib/src/b.txt')!;
        const kept = await vscode.commands.executeCommand<string>('agentCheckpoints.review.keepHunk', {
          runId,
          patchId: patchB.patchId,
          hunk: 0,
        });
        assert.equal(kept, '1 change kept');

        // The first folder's file: a live change names it bare, and its patch reads as in conflict.
        const patchA = patches.find((p) => p.path === 'notes/a.txt')!;
        const editor = await vscode.window.showTextDocument(first);
        await editor.edit((b) => b.insert(new vscode.Position(0, 0), 'typed\n'));
        await waitFor('a live change of notes/a.txt', () => changes.some((c) => c.kind === 'live' && c.paths.includes('notes/a.txt')));
        assert.equal((await api.timelineBackend.liveStates([patchA])).get(patchA.patchId), 'conflict');
        await vscode.commands.executeCommand('workbench.action.files.revert');

        // Outside every folder, and an untitled buffer: no workspace path, so no mark, no lens, no live event.
        const outsidePath = nodePath.join(await fs.mkdtemp(nodePath.join(tmpdir(), 'outside-')), 'b.txt');
        await fs.writeFile(outsidePath, 'B2\n');
        const outside = vscode.Uri.file(outsidePath);
        const untitled = await vscode.workspace.openTextDocument({ content: 'B2\n' });
        for (const doc of [await vscode.workspace.openTextDocument(outside), untitled]) {
          const shown = await vscode.window.showTextDocument(doc);
          await shown.edit((b) => b.insert(new vscode.Position(0, 0), 'x\n'));
          assert.equal(api.review.marksOf(doc.uri), undefined);
          assert.deepEqual(await lensTitles(doc.uri), []);
          await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
        }
        // The barrier: a first-folder edit after them; every live event before and with it names workspace files only.
        changes.length = 0;
        const again = await vscode.window.showTextDocument(first);
        await again.edit((b) => b.insert(new vscode.Position(0, 0), 'again\n'));
        await waitFor('the barrier edit', () => changes.some((c) => c.kind === 'live' && c.paths.includes('notes/a.txt')));
        const named = changes.flatMap((c) => (c.kind === 'live' ? c.paths : []));
        assert.deepEqual([...new Set(named)], ['notes/a.txt'], 'neither the outside file nor the untitled buffer is named');
        await vscode.commands.executeCommand('workbench.action.files.revert');
      } finally {
        sub.dispose();
        await fake.dispose();
      }
    });
  });
}
