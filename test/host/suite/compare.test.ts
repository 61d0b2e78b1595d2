import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { BRANCH_SCHEME } from '../../../src/host/vscode/restore/compare/index';
import { extensionApi, finalAnswer, toolUse, useFakeModel, waitFor, writeWorkspaceFile } from './helpers';

const tabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs);

/** The side-by-side steps tab of a comparison, once open. */
function stepsTab(): vscode.TabInputTextDiff | undefined {
  for (const tab of tabs()) {
    if (tab.input instanceof vscode.TabInputTextDiff && tab.input.original.scheme === BRANCH_SCHEME) return tab.input;
  }
  return undefined;
}

export function compareSuite(): void {
  describe('Agent: Compare Branches', () => {
    it("compares a fork given a new instruction with its parent: steps side by side, the file each wrote as a diff, from the Timeline's pick of relatives", async function () {
      this.timeout(240_000);
      const api = await extensionApi();
      await writeWorkspaceFile('compare/a.txt', 'start\n');
      const fake = await useFakeModel(api, [
        toolUse('toolu_cmp_read', 'read_file', { path: 'compare/a.txt' }),
        toolUse('toolu_cmp_parent', 'edit_file', { path: 'compare/a.txt', old_string: 'start', new_string: 'parent way' }),
        finalAnswer('Done the parent way.'),
        toolUse('toolu_cmp_fork', 'edit_file', { path: 'compare/a.txt', old_string: 'start', new_string: 'fork way' }),
        finalAnswer('Done the fork way.'),
      ]);
      try {
        const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run', {
          task: 'Change compare/a.txt',
        });
        assert.ok(started, JSON.stringify(fake.prompts.messages));
        assert.equal((await api.whenIdle())?.status, 'completed', api.logText());
        const fork = await api.timelineBackend.fork(started.runId, 2);
        // The fork's files were kept: put a.txt back as step 2 found it, so the fork's edit applies.
        await writeWorkspaceFile('compare/a.txt', 'start\n');
        assert.equal((await api.continueRun(fork, 'Do it the fork way'))?.status, 'completed', api.logText());

        // As the palette does it: the first pick is the fork, the second list offers its parent first.
        let offered: readonly vscode.QuickPickItem[] = [];
        fake.prompts.pick = (items) => {
          if (items.some((i) => i.description?.startsWith('parent'))) {
            offered = items;
            return items[0];
          }
          return items.find((i) => i.detail === fork);
        };
        const summary = await vscode.commands.executeCommand<string | undefined>('agentCheckpoints.compareBranches');
        assert.equal(
          summary,
          '"fork: Do it the fork way" and "Change compare/a.txt" part at step 2; 1 file differs: compare/a.txt.',
          JSON.stringify(fake.prompts.messages),
        );
        assert.equal((offered[0] as { runId?: string }).runId, started.runId, 'the parent is offered first');

        const steps = await waitFor('the steps tab', () => stepsTab());
        const left = (await vscode.workspace.openTextDocument(steps.original)).getText();
        const right = (await vscode.workspace.openTextDocument(steps.modified)).getText();
        assert.equal(steps.original.path, steps.modified.path, 'one path on both sides: no rename badge');
        assert.match(left, new RegExp(`Fork of run ${started.runId} from the start of step 2`));
        assert.match(left, /Do it the fork way/);
        assert.match(left, /Done the fork way/);
        assert.match(right, /Done the parent way/);
        assert.doesNotMatch(right, /Step 1\n/, 'the shared step is not repeated');
        assert.ok(
          tabs().some((t) => t.label.startsWith('Files: fork: Do it the fork way ↔ Change compare/a.txt')),
          `the files' diff is open: ${tabs().map((t) => t.label)}`,
        );
        const file = (side: string) => vscode.Uri.from({ scheme: BRANCH_SCHEME, path: '/x/compare/a.txt', query: side });
        const bad = await vscode.workspace.openTextDocument(file('kind=file&hash=../../etc/passwd&binary=0')).then(
          () => 'opened',
          (error: Error) => error.message,
        );
        assert.notEqual(bad, 'opened', 'a document whose query does not parse is refused');

        const unknown = await vscode.commands.executeCommand<string | undefined>('agentCheckpoints.compareBranches', {
          runId: fork,
          otherRunId: 'no-such-run',
        });
        assert.equal(unknown, undefined);
        assert.ok(fake.prompts.saw(/Compare Branches: no run no-such-run/), JSON.stringify(fake.prompts.messages));
      } finally {
        await fake.dispose();
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      }
    });
  });
}
