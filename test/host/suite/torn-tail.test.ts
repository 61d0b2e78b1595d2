import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { openFileStore } from '../../../src/host/node/store-factory';
import { extensionApi, FAKE_MODEL, finalAnswer, useFakeModel, waitFor, workspaceRoot } from './helpers';

export function tornTailSuite(): void {
  describe('a torn write at the end of a run', () => {
    it('is cut when the run is resumed, and the person is told: a warning and the log', async () => {
      const api = await extensionApi();
      const fake = await useFakeModel(api, [finalAnswer('Nothing was left to do.')]);
      try {
        const store = openFileStore(api.storagePath);
        const runId = `torn-tail-${Date.now()}`;
        const writer = await store.createRun({
          runId,
          task: 'Resume after a torn write',
          createdAt: Date.now(),
          workspaceFolders: [workspaceRoot()],
          git: { isRepo: false, dirtyPaths: [] },
          settings: { model: FAKE_MODEL, provider: 'anthropic', maxTurns: 5, maxOutputTokensPerCall: 512 },
        });
        await writer.append([{ type: 'status', status: 'paused', reason: 'host test' }]);
        await writer.close();
        const journal = store.journalPath(runId);
        const whole = await fs.readFile(journal);
        await fs.appendFile(journal, '{"s":3,"b":3,"e":3,"r":{"v":1,"at":');

        const resumed = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.resume', { runId });
        assert.equal(resumed?.runId, runId, JSON.stringify(fake.prompts.messages));
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `${JSON.stringify(outcome)}\n${api.logText()}`);
        const shown = await waitFor('the warning about the cut', () => fake.prompts.saw(/an unfinished last write/));
        assert.equal(shown.kind, 'warning');
        assert.ok(shown.text.includes(`at byte ${whole.length} of ${journal}`), shown.text);
        assert.match(api.logText(), /an unfinished last write .* was cut/);
        assert.deepEqual((await fs.readFile(journal)).subarray(0, whole.length), whole, 'only the torn line was cut');
      } finally {
        await fake.dispose();
      }
    });
  });
}
