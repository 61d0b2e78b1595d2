import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { openFileStore } from '../../../src/host/node/store-factory';
import { extensionApi, finalAnswer, toolUse, useFakeModel, waitFor, workspaceCounter } from './helpers';

export function cancelResumeSuite(): void {
  describe('Agent: Cancel, then Agent: Resume', () => {
    it('pauses mid-run and resumes to the end with no tool run twice', async () => {
      const api = await extensionApi();
      const counter = await workspaceCounter('cancel-resume');
      const slow = { ...toolUse('toolu_cmd_2', 'run_command', { command: `echo second >> "${counter}"` }), eventDelayMs: 400 };
      const fake = await useFakeModel(api, [
        toolUse('toolu_cmd_1', 'run_command', { command: `echo first >> "${counter}"` }),
        slow,
        // After the resume the same question is asked again (the streamed answer was never recorded).
        toolUse('toolu_cmd_2b', 'run_command', { command: `echo second >> "${counter}"` }),
        finalAnswer('Both commands ran.'),
      ]);
      try {
        fake.prompts.answer(/The agent wants to run/, 'Allow for this run');
        const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run', {
          task: 'Run the two echo commands',
        });
        assert.ok(started, JSON.stringify(fake.prompts.messages));
        await waitFor('the second model request to be streaming', () => fake.server.requests.length >= 2);
        assert.equal(await vscode.commands.executeCommand('agentCheckpoints.cancel'), true);
        const paused = await api.whenIdle();
        assert.equal(paused?.status, 'paused', JSON.stringify(paused));
        assert.equal(paused?.reason, 'cancelled');
        assert.equal(await fs.readFile(counter, 'utf8'), 'first\n', 'only the first command ran before the cancel');
        await api.refreshContextKeys();

        fake.prompts.pick = (items) => items.find((i) => i.detail === started.runId);
        const resumed = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.resume');
        assert.equal(resumed?.runId, started.runId, `resume quick pick offers the paused run: ${JSON.stringify(fake.prompts.messages)}`);
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `${JSON.stringify(outcome)}\n${api.logText()}`);
        assert.equal(await fs.readFile(counter, 'utf8'), 'first\nsecond\n', 'each command ran exactly once');

        const state = await openFileStore(api.storagePath).readRun(started.runId);
        const commands = state.ledger.filter((e) => e.toolName === 'run_command');
        assert.deepEqual(
          commands.map((e) => e.status),
          ['succeeded', 'succeeded'],
        );
        assert.ok(
          state.approvals.some((a) => a.decision === 'allow_for_run'),
          'the approval is recorded in the run',
        );
      } finally {
        await fake.dispose();
      }
    });
  });
}
