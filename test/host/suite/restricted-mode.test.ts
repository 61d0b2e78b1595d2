import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { openFileStore } from '../../../src/host/node/store-factory';
import { RESTRICTED_MODE_MESSAGE } from '../../../src/host/vscode/window/trust';
import { extensionApi, useFakeModel } from './helpers';

/** Runs only in a window whose folder is NOT trusted (see test/host/restricted.ts). */
export function restrictedModeSuite(): void {
  describe('a real restricted-mode workspace', () => {
    it('the folder is untrusted and the extension still activates (limited support)', async () => {
      assert.equal(vscode.workspace.isTrusted, false, 'the launcher opened the folder with workspace trust on');
      const api = await extensionApi();
      assert.ok(api.storagePath);
    });

    it('Agent: Run and Agent: Resume refuse with a clear message: no run, no model call, no file written', async () => {
      const api = await extensionApi();
      const fake = await useFakeModel(api, [{ content: [{ type: 'text', text: 'never sent' }], stop_reason: 'end_turn' }]);
      const store = openFileStore(api.storagePath);
      const before = (await store.listRuns()).length;
      const filesBefore = (await vscode.workspace.findFiles('**/*')).length;
      try {
        assert.equal(await vscode.commands.executeCommand('agentCheckpoints.run', { task: 'create hello.txt' }), undefined);
        assert.equal(await vscode.commands.executeCommand('agentCheckpoints.resume', { runId: 'any' }), undefined);
        const refusals = fake.prompts.messages.filter((m) => m.text.includes(RESTRICTED_MODE_MESSAGE));
        assert.equal(refusals.length, 2, JSON.stringify(fake.prompts.messages));
        assert.equal(fake.server.requests.length, 0, 'no model call');
        assert.equal((await store.listRuns()).length, before, 'no run recorded');
        assert.equal((await vscode.workspace.findFiles('**/*')).length, filesBefore, 'no file written');
      } finally {
        await fake.dispose();
      }
    });
  });
}
