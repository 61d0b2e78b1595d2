import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { COMMAND_IDS, TIMELINE_FOCUS } from '../../../src/host/vscode/commands/command-table';

export const EXTENSION_ID = 'agent-checkpoints.agent-checkpoints';

export function activationSuite(): void {
  describe('activation', () => {
    it('the extension is installed and activates', async () => {
      const ext = vscode.extensions.getExtension(EXTENSION_ID);
      assert.ok(ext, `extension ${EXTENSION_ID} not found`);
      await ext.activate();
      assert.equal(ext.isActive, true);
    });

    it('registers every command of the command table, and package.json contributes each', async () => {
      const commands = new Set(await vscode.commands.getCommands(true));
      const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: Array<{ command: string }> } };
      const contributed = new Set(pkg.contributes.commands.map((c) => c.command));
      assert.ok(COMMAND_IDS.length >= 21, `the table lists ${COMMAND_IDS.length} commands`);
      assert.deepEqual(
        COMMAND_IDS.filter((id) => !contributed.has(id)),
        [],
        'not contributed',
      );
      assert.deepEqual(
        COMMAND_IDS.filter((id) => !commands.has(id)),
        [],
        'not registered',
      );
      assert.ok(commands.has(TIMELINE_FOCUS), 'the Timeline view gives its focus command');
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
