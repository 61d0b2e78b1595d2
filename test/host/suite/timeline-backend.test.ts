import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { openFileStore } from '../../../src/host/node/store-factory';
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

    it("a run started here and a fork made here become the window's selected run; a pick selects another", async () => {
      const api = await extensionApi();
      const backend = api.timelineBackend;
      await writeWorkspaceFile('tl/selected.txt', 'one\n');
      const fake = await useFakeModel(api, [
        toolUse('toolu_tl_select', 'write_file', { path: 'tl/selected.txt', content: 'two\n' }),
        finalAnswer('ok'),
      ]);
      const selected: (string | undefined)[] = [];
      const sub = backend.onDidSelect((runId) => selected.push(runId));
      try {
        const started = await vscode.commands.executeCommand<{ runId: string }>('agentCheckpoints.run', { task: 'Write two' });
        assert.equal((await api.whenIdle())?.status, 'completed');
        assert.equal(backend.selectedRun(), started.runId, 'the run started here');
        const forkId = await backend.fork(started.runId, 2);
        assert.equal(backend.selectedRun(), forkId, 'the fork made here');
        backend.select(started.runId);
        assert.deepEqual(selected, [started.runId, forkId, started.runId]);
      } finally {
        sub.dispose();
        await fake.dispose();
      }
    });

    it('reads no journal for a heartbeat of another holder, nor for a Keep', async () => {
      const api = await extensionApi();
      const before = Array.from({ length: 20 }, (_, i) => `row ${i}\n`).join('');
      await writeWorkspaceFile('tl/reads.txt', before);
      const after = before.replace('row 2\n', 'row 2 changed\n').replace('row 15\n', 'row 15 changed\n');
      const fake = await useFakeModel(api, [
        toolUse('toolu_tl_reads', 'write_file', { path: 'tl/reads.txt', content: after }),
        finalAnswer('ok'),
      ]);
      const started = await vscode.commands.executeCommand<{ runId: string }>('agentCheckpoints.run', { task: 'Change two rows' });
      assert.equal((await api.whenIdle())?.status, 'completed');
      await fake.dispose();
      const runId = started.runId;
      await waitFor('two hunks to review', () => api.review.count(runId) === 2 || undefined);
      const patch = (await api.timelineBackend.readRun(runId)).patches.find((p) => p.path === 'tl/reads.txt')!;
      // The store's notices arrive, the run model reads what they tell, the review follows.
      const settle = async () => {
        await new Promise((resolve) => setTimeout(resolve, 700));
        await api.modelSettled();
        await api.review.settled();
      };

      // Another holder (another store object: another window or process) holds the run and heartbeats.
      const other = await openFileStore(api.storagePath).openWriter(runId);
      await settle();
      let reads = api.journalReads();
      for (let beat = 0; beat < 3; beat++) {
        await other.renewLease();
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      await settle();
      assert.equal(api.journalReads() - reads, 0, 'a heartbeat reads no journal');
      await other.close();
      await settle();

      reads = api.journalReads();
      const kept = await vscode.commands.executeCommand<string>('agentCheckpoints.review.keepHunk', {
        runId,
        patchId: patch.patchId,
        hunk: 0,
      });
      assert.equal(kept, '1 change kept');
      assert.equal(api.review.count(runId), 1, 'the review follows the Keep at once');
      await settle();
      assert.equal(api.journalReads() - reads, 0, 'a Keep reads no journal (nor does its own write seen by the watcher)');
      assert.equal(api.review.count(runId), 1);
    });
  });
}
