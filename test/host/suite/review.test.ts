import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { extensionApi, finalAnswer, toolUse, useFakeModel, waitFor, writeWorkspaceFile } from './helpers';

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}\n`).join('');
const BEFORE = lines(30);
const agentLine = (i: number) => `line ${i} by the agent\n`;
const AFTER = BEFORE.replace('line 3\n', agentLine(3)).replace('line 15\n', agentLine(15)).replace('line 27\n', agentLine(27));

async function runAgentOn(uri: vscode.Uri) {
  const api = await extensionApi();
  await writeWorkspaceFile('review/closed.txt', 'alpha\nbeta\ngamma\n');
  const fake = await useFakeModel(api, [
    toolUse('toolu_review_write', 'write_file', { path: 'review/open.txt', content: AFTER }),
    toolUse('toolu_review_edit', 'edit_file', { path: 'review/closed.txt', old_string: 'beta', new_string: 'BETA' }),
    finalAnswer('done'),
  ]);
  const started = await vscode.commands.executeCommand<{ runId: string }>('agentCheckpoints.run', { task: 'Review me' });
  assert.equal((await api.whenIdle())?.status, 'completed');
  await fake.dispose();
  const state = await api.timelineBackend.readRun(started.runId);
  const patch = state.patches.find((p) => p.path === 'review/open.txt')!;
  const closed = state.patches.find((p) => p.path === 'review/closed.txt')!;
  assert.equal(await fs.readFile(uri.fsPath, 'utf8'), AFTER);
  return { api, runId: started.runId, patch, closed };
}

/** The records of a run's journal, as written (one checksummed line each). */
async function journalRecords(storagePath: string, runId: string): Promise<Record<string, unknown>[]> {
  const text = await fs.readFile(`${storagePath}/runs/${runId}/journal.jsonl`, 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { r: Record<string, unknown> }).r);
}

const marksOn = async (api: Awaited<ReturnType<typeof extensionApi>>, uri: vscode.Uri, kind: 'modified' | 'edited', want: number[]) =>
  waitFor(`${kind} marks at ${want.join(',')}`, () => {
    const marks = api.review.marksOf(uri);
    return marks && JSON.stringify(marks[kind]) === JSON.stringify(want) ? marks : undefined;
  });

export function reviewSuite(): void {
  describe('inline review of agent edits', () => {
    afterEach(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

    it('keeps one hunk, undoes another around a user edit, and after a reload exactly the rest is marked', async () => {
      const uri = await writeWorkspaceFile('review/open.txt', BEFORE);
      const { api, runId, patch, closed } = await runAgentOn(uri);
      await api.review.settled();
      assert.equal(api.review.count(runId), 4, 'three hunks in the open file, one in the closed one');

      const editor = await vscode.window.showTextDocument(uri);
      await marksOn(api, uri, 'modified', [3, 15, 27]);
      const kept = await vscode.commands.executeCommand<string>('agentCheckpoints.review.keepHunk', {
        runId,
        patchId: patch.patchId,
        hunk: 0,
      });
      assert.equal(kept, '1 change kept');
      await marksOn(api, uri, 'modified', [15, 27]);

      await editor.edit((b) => b.insert(new vscode.Position(0, 0), 'the person typed this\n'));
      await marksOn(api, uri, 'modified', [16, 28]);
      editor.selection = new vscode.Selection(16, 2, 16, 2);
      const undone = await vscode.commands.executeCommand<string>('agentCheckpoints.review.undoHunk');
      assert.equal(undone, '1 change undone');
      const expected = `the person typed this\n${AFTER.replace(agentLine(15), 'line 15\n')}`;
      assert.equal(editor.document.getText(), expected, 'the hunk is undone in the live buffer and the user edit stays');
      assert.ok(editor.document.isDirty, 'an unsaved buffer stays unsaved');
      await marksOn(api, uri, 'modified', [28]);
      // The undo is a restore around the edit (write-ahead): its record naming the hunk, then its confirmation and the decision.
      const records = await journalRecords(api.storagePath, runId);
      const at = records.map((r) => r.type === 'restore' && Array.isArray(r.hunks)).lastIndexOf(true);
      assert.ok(at >= 0, 'a restore record names the undone hunk');
      assert.deepEqual(
        records.slice(at + 1).map((r) => r.type),
        ['restore_done', 'review'],
        'confirmed after the edit, then the undo decision',
      );
      assert.deepEqual(records[at + 1]!.written, ['review/open.txt']);

      await api.review.reload();
      await marksOn(api, uri, 'modified', [28]);
      assert.equal(api.review.count(runId), 2);

      // The person edits the last agent line: it shows as edited and Undo reports a conflict.
      await editor.edit((b) => b.replace(new vscode.Range(28, 0, 28, 4), 'LINE'));
      await marksOn(api, uri, 'edited', [28]);
      const conflict = await vscode.commands.executeCommand<string>('agentCheckpoints.review.undoHunk', {
        runId,
        patchId: patch.patchId,
        hunk: 2,
      });
      assert.match(conflict, /0 changes undone; 1 edited since/);
      assert.ok(editor.document.getText().includes('LINE 27 by the agent'), 'an edited hunk is never forced');
      await vscode.commands.executeCommand('workbench.action.files.revert');

      // A file not open yet: its marks show when it opens; a rollback and its undo keep the set consistent.
      const closedUri = vscode.Uri.joinPath(uri, '..', 'closed.txt');
      await api.timelineBackend.rollbackPatch(runId, closed.patchId);
      await waitFor('the rolled back patch leaves the review', () => api.review.count(runId) === 1);
      await api.timelineBackend.undoLastRestore(runId);
      await waitFor('the undone rollback brings its hunk back', () => api.review.count(runId) === 2);
      await vscode.window.showTextDocument(closedUri);
      await marksOn(api, closedUri, 'modified', [1]);
      await vscode.commands.executeCommand('agentCheckpoints.review.keepRun', runId);
      await marksOn(api, closedUri, 'modified', []);
      assert.equal(api.review.count(runId), 0);
      const state = await api.timelineBackend.readRun(runId);
      assert.equal(state.patches.find((p) => p.patchId === closed.patchId)?.state, 'accepted', 'a fully kept patch is accepted');
    });

    it("a command's chmod +x waits as one change of the file: its lens says so, Undo clears the bit, Keep accepts it, and Undo refuses once the bit is not the agent's", async function () {
      if (process.platform !== 'linux') this.skip(); // the sandbox that turns a chmod into a patch
      const uri = await writeWorkspaceFile('review/run.sh', '#!/bin/sh\necho hi\n');
      const isExec = async () => ((await fs.stat(uri.fsPath)).mode & 0o111) !== 0;
      const api = await extensionApi();
      const chmod = async (id: string) => {
        const fake = await useFakeModel(api, [toolUse(id, 'run_command', { command: 'chmod +x review/run.sh' }), finalAnswer('done')]);
        try {
          fake.prompts.answer(/The agent wants to/, 'Allow once');
          const started = await vscode.commands.executeCommand<{ runId: string }>('agentCheckpoints.run', {
            task: 'Make run.sh executable',
          });
          assert.equal((await api.whenIdle())?.status, 'completed', api.logText());
          assert.match(JSON.stringify(fake.server.requests.at(-1)?.body), /M review\/run\.sh \(made executable\)/);
          const patch = (await api.timelineBackend.readRun(started.runId)).patches.find((p) => p.path === 'review/run.sh')!;
          assert.deepEqual([patch.beforeHash === patch.afterHash, patch.execAfter, await isExec()], [true, true, true]);
          await waitFor('the change of the bit waits for review', () => api.review.count(started.runId) === 1);
          return { runId: started.runId, ref: { runId: started.runId, patchId: patch.patchId, hunk: 0 } };
        } finally {
          await fake.dispose();
        }
      };

      const first = await chmod('toolu_chmod_1');
      await vscode.window.showTextDocument(uri);
      const lenses = await waitFor('the Keep / Undo lens at the top of the file', async () => {
        const all = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri);
        const titles = all.map((l) => l.command?.title ?? '').filter((t) => /Keep|Undo|made executable/.test(t));
        return titles.length === 3 ? { titles, line: all[0]!.range.start.line } : undefined;
      });
      assert.deepEqual(lenses.titles, ['$(check) Keep', '$(discard) Undo', 'Agent step 1 of "Make run.sh executable": made executable']);
      assert.equal(lenses.line, 0);
      const liveState = async (ref: { runId: string; patchId: string }) => {
        const patch = (await api.timelineBackend.readRun(ref.runId)).patches.find((p) => p.patchId === ref.patchId)!;
        return (await api.timelineBackend.liveStates([patch])).get(patch.patchId);
      };
      assert.equal(await liveState(first.ref), 'applied', "the bytes and the bit are the agent's");
      assert.equal(await vscode.commands.executeCommand<string>('agentCheckpoints.review.undoHunk', first.ref), '1 change undone');
      assert.equal(await isExec(), false, 'Undo cleared the bit of the live file');
      assert.equal(await liveState(first.ref), 'not_applied', 'the same bytes, the bit put back: the Timeline row reads not applied');
      assert.equal(await fs.readFile(uri.fsPath, 'utf8'), '#!/bin/sh\necho hi\n');
      await waitFor('nothing waits after the Undo', () => api.review.count(first.runId) === 0);

      const second = await chmod('toolu_chmod_2');
      await fs.chmod(uri.fsPath, 0o644);
      assert.equal(await vscode.commands.executeCommand('agentCheckpoints.review.undoHunk', second.ref), undefined, 'refused');
      assert.equal(await isExec(), false, "the person's bit stays");
      assert.equal(await liveState(second.ref), 'not_applied', 'the bit is back as before the command');
      assert.equal(api.review.count(second.runId), 1, 'still waiting: it can be kept');
      await fs.chmod(uri.fsPath, 0o755);
      assert.equal(await vscode.commands.executeCommand<string>('agentCheckpoints.review.keepHunk', second.ref), '1 change kept');
      await waitFor('nothing waits after the Keep', () => api.review.count(second.runId) === 0);
      const kept = (await api.timelineBackend.readRun(second.runId)).patches.find((p) => p.patchId === second.ref.patchId);
      assert.equal(kept?.state, 'accepted');
      assert.equal(await isExec(), true);
    });
  });
}
