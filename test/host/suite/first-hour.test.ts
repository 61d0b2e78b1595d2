import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { extensionApi, finalAnswer, toolUse, useFakeModel, waitFor, writeWorkspaceFile } from './helpers';

// The first hour: a failure says what it is with the action beside it (notification, status bar,
// the run's record the Timeline words), a refused request is sent once, and a bulk Undo asks.

const RULE = 'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_x';

export function firstHourSuite(): void {
  describe('first hour: failures in words, nothing destructive by accident', () => {
    it('a refused key says "The API key was refused" with Set API Key and Retry; Retry goes on', async () => {
      const api = await extensionApi();
      const fake = await useFakeModel(api, [{ fault: 'status', status: 401, message: 'invalid x-api-key' }, finalAnswer('Done.')]);
      try {
        const started = await vscode.commands.executeCommand<{ runId: string }>('agentCheckpoints.run', { task: 'First hour: key' });
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'paused');
        assert.equal(outcome?.failure?.kind, 'auth');
        const shown = await waitFor('the notification', () => fake.prompts.saw(/The API key was refused/));
        assert.deepEqual(shown.actions, ['Set API Key', 'Retry']);
        assert.match(api.statusText(), /paused · The API key was refused/);
        assert.equal((await api.timelineBackend.readRun(started.runId)).failure?.kind, 'auth', 'the Timeline reads it from the run');
        assert.equal(await api.timelineBackend.failureAction(started.runId, 'retry'), 'Run resumed.');
        assert.equal((await api.whenIdle())?.status, 'completed');
        assert.equal((await api.timelineBackend.readRun(started.runId)).failure, undefined, 'a resumed run has no failure left');
      } finally {
        await fake.dispose();
      }
    });

    it('a refused request (400) pauses with the API message, is sent once, and the log names the rule', async () => {
      const api = await extensionApi();
      const fake = await useFakeModel(api, [{ fault: 'status', status: 400, message: RULE }, finalAnswer('never asked')]);
      try {
        await vscode.commands.executeCommand('agentCheckpoints.run', { task: 'First hour: refused' });
        const outcome = await api.whenIdle();
        assert.deepEqual(outcome?.failure, { kind: 'refused', status: 400, message: RULE });
        const shown = await waitFor('the notification', () => fake.prompts.saw(/The request was refused/));
        assert.ok(shown.text.includes(RULE) && /resuming sends the same request/.test(shown.text), shown.text);
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(fake.server.requests.length, 1, 'never retried by itself');
        assert.ok(api.logText().includes(RULE), 'the log names the rule');
      } finally {
        await fake.dispose();
      }
    });

    it('an approval while the Explorer is open: a badge, a notification with Allow/Deny, the status bar says so', async function () {
      // Each wait below is for a condition; a loaded machine gets the room (not a guessed sleep).
      this.timeout(180_000);
      const LOADED = 60_000;
      const api = await extensionApi();
      const fake = await useFakeModel(api, [toolUse('toolu_fh_cmd', 'run_command', { command: 'echo hi' }), finalAnswer('done')]);
      try {
        // The badge is painted on the Timeline view: set it up here (not left to an earlier test).
        await vscode.commands.executeCommand('agentCheckpoints.timeline.focus');
        await api.whenTimelineResolved();
        await vscode.commands.executeCommand('workbench.view.explorer');
        await vscode.commands.executeCommand('agentCheckpoints.run', { task: 'First hour: approval' });
        const shown = await waitFor('the approval notification', () => fake.prompts.saw(/The agent wants to/), LOADED);
        assert.deepEqual(shown.actions, ['Allow once', 'Allow for this run', 'Deny']);
        await waitFor('the status bar to say it waits', () => /waiting for your approval/.test(api.statusText()) || undefined, LOADED);
        await waitFor('the badge on the view icon', () => api.approvalBadge() === 1 || undefined, LOADED);
        await vscode.commands.executeCommand('agentCheckpoints.cancel');
        assert.equal((await api.whenIdle())?.status, 'paused');
        await waitFor('the badge to go', () => api.approvalBadge() === undefined || undefined, LOADED);
        assert.doesNotMatch(api.statusText(), /waiting for your approval/);
      } finally {
        await fake.dispose();
      }
    });

    it('the Timeline opens in an editor tab for room, once', async () => {
      const panels = () =>
        vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('agentCheckpoints.timelinePanel'));
      await vscode.commands.executeCommand('agentCheckpoints.timeline.openInEditor');
      await waitFor('the Timeline tab', () => (panels().length === 1 ? true : undefined));
      await vscode.commands.executeCommand('agentCheckpoints.timeline.openInEditor');
      assert.equal(panels().length, 1, 'a second call brings the same tab forward');
      assert.equal(panels()[0]!.label, 'Agent Timeline');
      await vscode.window.tabGroups.close(panels());
      await waitFor('the tab to close', () => (panels().length === 0 ? true : undefined));
    });

    it('Undo All Agent Changes asks which run and confirms before it undoes anything', async () => {
      const api = await extensionApi();
      const uri = await writeWorkspaceFile('first-hour/undo.txt', 'before\n');
      const fake = await useFakeModel(api, [
        toolUse('toolu_fh_write', 'write_file', { path: 'first-hour/undo.txt', content: 'after\n' }),
        finalAnswer('done'),
      ]);
      try {
        const started = await vscode.commands.executeCommand<{ runId: string }>('agentCheckpoints.run', { task: 'First hour: undo' });
        assert.equal((await api.whenIdle())?.status, 'completed');
        await api.review.settled();
        await waitFor('the change to wait for review', () => api.review.count(started.runId) > 0 || undefined);
        let asked: readonly string[] = [];
        fake.prompts.pick = (items) => {
          asked = items.map((i) => i.label);
          return items.find((i) => (i as { runId?: string }).runId === started.runId);
        };
        const dismissed = await vscode.commands.executeCommand<string | undefined>('agentCheckpoints.review.undoRun');
        assert.equal(dismissed, undefined);
        assert.ok(asked.includes('First hour: undo'), `asked which run: ${asked.join(', ')}`);
        assert.ok(fake.prompts.saw(/^Undo 1 change of "First hour: undo" in 1 file\?$/), 'an Undo is confirmed first');
        assert.equal(await fs.readFile(uri.fsPath, 'utf8'), 'after\n', 'nothing undone without the confirmation');
        fake.prompts.answer(/^Undo 1 change/, 'Undo Changes');
        assert.equal(await vscode.commands.executeCommand<string>('agentCheckpoints.review.undoRun'), '1 change undone');
        assert.equal(await fs.readFile(uri.fsPath, 'utf8'), 'before\n');
      } finally {
        await fake.dispose();
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      }
    });
  });
}
