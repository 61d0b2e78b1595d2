import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { hashContent } from '../../../src/core/patches/hash';
import { openFileStore } from '../../../src/host/node/store-factory';
import { extensionApi, finalAnswer, toolUse, useFakeModel, writeWorkspaceFile } from './helpers';

const utf8 = new TextEncoder();

export function agentRunSuite(): void {
  describe('Agent: Run on live buffers', () => {
    it('edits a buffer with unsaved user edits without saving it, and saves a clean one it edits', async () => {
      const api = await extensionApi();
      const dirtyUri = await writeWorkspaceFile('live/dirty.txt', 'alpha\nbeta\ngamma\n');
      const cleanUri = await writeWorkspaceFile('live/clean.txt', 'one\ntwo\n');
      const dirtyDoc = await vscode.workspace.openTextDocument(dirtyUri);
      const editor = await vscode.window.showTextDocument(dirtyDoc);
      await editor.edit((b) => b.insert(new vscode.Position(0, 0), 'USER EDIT\n'));
      const cleanDoc = await vscode.workspace.openTextDocument(cleanUri);
      await vscode.window.showTextDocument(cleanDoc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
      assert.equal(dirtyDoc.isDirty, true);
      const unsavedHash = hashContent(utf8.encode(dirtyDoc.getText()));

      const fake = await useFakeModel(api, [
        toolUse('toolu_edit_dirty', 'edit_file', { path: 'live/dirty.txt', old_string: 'gamma', new_string: 'GAMMA' }),
        toolUse('toolu_edit_clean', 'edit_file', { path: 'live/clean.txt', old_string: 'two', new_string: 'TWO' }),
        finalAnswer('Both files edited.'),
      ]);
      try {
        fake.prompts.inputs.push('Capitalise gamma and two');
        fake.prompts.pick = (items) => items.find((i) => i.label.startsWith('No extra context'));
        const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run');
        assert.ok(started, `the run did not start: ${JSON.stringify(fake.prompts.messages)}`);
        assert.equal(api.runningRunId(), started.runId);
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `outcome ${JSON.stringify(outcome)}; log:\n${api.logText()}`);

        assert.equal(dirtyDoc.getText(), 'USER EDIT\nalpha\nbeta\nGAMMA\n', 'the user edit survives next to the agent edit');
        assert.equal(dirtyDoc.isDirty, true, "the agent never saves a buffer holding the user's unsaved edits");
        assert.equal(await fs.readFile(dirtyUri.fsPath, 'utf8'), 'alpha\nbeta\ngamma\n', 'disk still holds the last saved content');
        assert.equal(cleanDoc.getText(), 'one\nTWO\n');
        assert.equal(cleanDoc.isDirty, false, 'a clean document the agent edits is saved');
        assert.equal(await fs.readFile(cleanUri.fsPath, 'utf8'), 'one\nTWO\n');

        const state = await openFileStore(api.storagePath).readRun(started.runId);
        const dirtyPatch = state.patches.find((p) => p.path === 'live/dirty.txt');
        const cleanPatch = state.patches.find((p) => p.path === 'live/clean.txt');
        assert.ok(dirtyPatch && cleanPatch, 'both patches are recorded');
        assert.equal(dirtyPatch.beforeHash, unsavedHash, 'beforeHash is the hash of the unsaved buffer');
        assert.equal(dirtyPatch.afterHash, hashContent(utf8.encode(dirtyDoc.getText())));
        assert.equal(dirtyPatch.wroteDirtyBuffer, true);
        assert.equal(cleanPatch.wroteDirtyBuffer, undefined);
        assert.ok(api.statusText().includes('completed'), `status bar: ${api.statusText()}`);
        assert.ok(api.logText().includes('save point after_model'), 'the log holds the run trace');
      } finally {
        await fake.dispose();
        await vscode.window.showTextDocument(dirtyDoc);
        await vscode.commands.executeCommand('workbench.action.files.revert');
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      }
    });
  });
}
