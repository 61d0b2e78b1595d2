import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'agent-checkpoints.agent-checkpoints';

export function activationSuite(): void {
  describe('activation', () => {
    it('the extension is installed and activates', async () => {
      const ext = vscode.extensions.getExtension(EXTENSION_ID);
      assert.ok(ext, `extension ${EXTENSION_ID} not found`);
      await ext.activate();
      assert.equal(ext.isActive, true);
    });

    it('registers the Agent commands', async () => {
      const commands = await vscode.commands.getCommands(true);
      const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: Array<{ command: string }> } };
      const contributed = pkg.contributes.commands.map((c) => c.command);
      for (const id of [
        'agentCheckpoints.run',
        'agentCheckpoints.resume',
        'agentCheckpoints.cancel',
        'agentCheckpoints.setApiKey',
        'agentCheckpoints.showLog',
        'agentCheckpoints.restoreCheckpoint',
        'agentCheckpoints.rollbackPatchPick',
        'agentCheckpoints.undoRestore',
      ]) {
        assert.ok(contributed.includes(id), `${id} is not contributed`);
        assert.ok(commands.includes(id), `${id} is not registered`);
      }
    });

    it('contributes the Timeline view and it resolves', async () => {
      const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
      const api = ext.exports as { whenTimelineResolved?: () => Promise<void> } | undefined;
      await vscode.commands.executeCommand('agentCheckpoints.timeline.focus');
      assert.ok(api?.whenTimelineResolved, 'extension exports whenTimelineResolved for tests');
      await api.whenTimelineResolved();
    });
  });
}
