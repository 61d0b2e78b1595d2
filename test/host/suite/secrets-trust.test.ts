import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { mayRunAgent } from '../../../src/host/vscode/window/trust';
import { extensionApi, filesUnder, ScriptedPrompts, TEST_API_KEY, useFakeModel } from './helpers';

export function secretsSuite(): void {
  describe('the API key', () => {
    it('reaches the model server but no file of the store and no log line, even from an error that quotes it', async () => {
      const api = await extensionApi();
      const fake = await useFakeModel(api, [{ fault: 'status', status: 401, message: `invalid x-api-key: ${TEST_API_KEY}` }]);
      try {
        const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run', { task: 'Say hello' });
        assert.ok(started);
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'paused', JSON.stringify(outcome));
        assert.ok(
          fake.server.requests.some((r) => r.apiKeySeen === TEST_API_KEY),
          'the key was sent to the model server',
        );
      } finally {
        await fake.dispose();
      }
      const files = [...(await filesUnder(api.storagePath)), ...(await filesUnder(api.logPath))];
      assert.ok(
        files.some((f) => f.includes('journal')),
        `the store holds journals: ${files.join(', ')}`,
      );
      for (const file of files) {
        const bytes = await fs.readFile(file);
        assert.equal(bytes.includes(TEST_API_KEY), false, `${file} contains the API key`);
      }
      assert.equal(api.logText().includes(TEST_API_KEY), false, 'the log contains the API key');
      assert.ok(api.logText().includes('401') || api.logText().includes('auth'), 'the auth failure itself is logged');
      const settings = JSON.stringify(vscode.workspace.getConfiguration('agentCheckpoints'));
      assert.equal(settings.includes(TEST_API_KEY), false, 'the key is not in the settings');
    });
  });
}

export function trustSuite(): void {
  describe('workspace trust', () => {
    it('the guard refuses in a restricted workspace with a clear message', () => {
      const prompts = new ScriptedPrompts();
      let asked = false;
      assert.equal(mayRunAgent({ isTrusted: () => false, prompts, manageTrust: async () => (asked = true) }, 'Agent: Run'), false);
      assert.match(prompts.messages[0]?.text ?? '', /Restricted Mode/);
      assert.equal(asked, false);
      assert.equal(mayRunAgent({ isTrusted: () => true, prompts, manageTrust: async () => undefined }, 'Agent: Run'), true);
      assert.equal(prompts.messages.length, 1);
    });

    it('declares limited support for untrusted workspaces', () => {
      const pkg = vscode.extensions.getExtension('agent-checkpoints.agent-checkpoints')!.packageJSON as {
        capabilities: { untrustedWorkspaces: { supported: unknown } };
      };
      assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
    });
  });
}
