import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import type { TimelineChange } from '../../../src/host/vscode/timeline/backend';
import { extensionApi, finalAnswer, toolUse, useFakeModel, waitFor, writeWorkspaceFile } from './helpers';

export function timelineBackendSuite(): void {
  describe('the Timeline backend over the extension', () => {
    it('reports live patch states as buffers change, rolls a patch back and undoes the rollback', async () => {
      const api = await extensionApi();
      const backend = api.timelineBackend;
      const uri = await writeWorkspaceFile('tl/file.txt', 'a\nb\nc\n');
      const fake = await useFakeModel(api, [
        toolUse('toolu_tl_edit', 'edit_file', { path: 'tl/file.txt', old_string: 'b', new_string: 'B' }),
        finalAnswer('ok'),
      ]);
      const changes: TimelineChange[] = [];
      const sub = backend.onDidChange((c) => changes.push(c));
      try {
        const started = await vscode.commands.executeCommand<{ runId: string }>('agentCheckpoints.run', { task: 'Capitalise b' });
        assert.equal((await api.whenIdle())?.status, 'completed');
        const runId = started.runId;
        assert.ok(
          changes.some((c) => c.kind === 'records' && c.runId === runId && c.records?.some((r) => r.type === 'run_end')),
          'appends are announced with their records',
        );
        const patch = (await backend.readRun(runId)).patches[0]!;
        assert.equal((await backend.liveStates([patch])).get(patch.patchId), 'applied');

        const doc = await vscode.workspace.openTextDocument(uri);
        const editor = await vscode.window.showTextDocument(doc);
        await editor.edit((b) => b.insert(new vscode.Position(0, 0), 'user\n'));
        await waitFor('a live change event for the edited file', () =>
          changes.some((c) => c.kind === 'live' && c.paths.includes('tl/file.txt')),
        );
        assert.equal((await backend.liveStates([patch])).get(patch.patchId), 'conflict');
        await vscode.commands.executeCommand('workbench.action.files.revert');

        const rolled = await backend.rollbackPatch(runId, patch.patchId);
        assert.equal(rolled.revertedHunks, 1);
        assert.equal(await fs.readFile(uri.fsPath, 'utf8'), 'a\nb\nc\n');
        const undone = await backend.undoLastRestore(runId);
        assert.deepEqual(
          undone.files.map((f) => f.action),
          ['revert'],
        );
        assert.equal(await fs.readFile(uri.fsPath, 'utf8'), 'a\nB\nc\n');
        await assert.rejects(backend.cancel(runId), /not running/);
      } finally {
        sub.dispose();
        await fake.dispose();
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      }
    });
  });
}
