import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import * as vscode from 'vscode';
import { extensionApi, finalAnswer, toolUse, useFakeModel, workspaceRoot, writeWorkspaceFile } from './helpers';

interface Body {
  system?: { text: string }[];
  messages: { role: string; content: unknown }[];
}

/** The text of the tool_result blocks of the request's last message. */
function lastResults(body: Body): string {
  return JSON.stringify(body.messages.at(-1)?.content);
}

export function instructionsSearchSuite(): void {
  describe('Agent: what the person sees (system prompt, AGENTS.md, unsaved buffers)', () => {
    it('sends the system prompt with AGENTS.md, and search_text finds a word typed into unsaved editors', async () => {
      const api = await extensionApi();
      const agents = await writeWorkspaceFile('AGENTS.md', 'Always answer in haiku.\n');
      const typedUri = await writeWorkspaceFile('seen/typed.txt', 'nothing to see\n');
      const typedDoc = await vscode.workspace.openTextDocument(typedUri);
      const editor = await vscode.window.showTextDocument(typedDoc);
      await editor.edit((b) => b.insert(new vscode.Position(0, 0), 'a quokka appears\n'));
      // A file not created yet: an editor on a path that does not exist on disk.
      const freshPath = nodePath.join(workspaceRoot(), 'seen', 'fresh.txt');
      const freshDoc = await vscode.workspace.openTextDocument(vscode.Uri.file(freshPath).with({ scheme: 'untitled' }));
      const freshEditor = await vscode.window.showTextDocument(freshDoc, { preview: false });
      await freshEditor.edit((b) => b.insert(new vscode.Position(0, 0), 'line one\nquokka two\n'));
      assert.equal(typedDoc.isDirty, true);
      const fake = await useFakeModel(api, [
        toolUse('toolu_search', 'search_text', { pattern: 'quokka', path: 'seen' }),
        toolUse('toolu_find', 'find_files', { pattern: '*.txt', path: 'seen' }),
        finalAnswer('Found it.'),
      ]);
      try {
        fake.prompts.inputs.push('Where is the quokka?');
        fake.prompts.pick = (items) => items.find((i) => i.label.startsWith('No extra context'));
        const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run');
        assert.ok(started, `the run did not start: ${JSON.stringify(fake.prompts.messages)}`);
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `outcome ${JSON.stringify(outcome)}; log:\n${api.logText()}`);
        const bodies = fake.server.requests.map((r) => r.body as Body);
        const system = bodies[0]!.system?.[0]?.text ?? '';
        assert.ok(system.includes('Always answer in haiku.') && system.includes('# Environment'), system.slice(0, 400));
        assert.ok(
          bodies.every((b) => b.system?.[0]?.text === system),
          'every request of the run sends the same system prompt',
        );
        const searched = lastResults(bodies[1]!);
        assert.ok(searched.includes('seen/typed.txt') && searched.includes('a quokka appears'), searched);
        assert.ok(searched.includes('seen/fresh.txt') && searched.includes('2: quokka two'), searched);
        const found = lastResults(bodies[2]!);
        assert.ok(found.includes('seen/fresh.txt') && found.includes('seen/typed.txt'), found);
      } finally {
        await fake.dispose();
        for (const doc of [typedDoc, freshDoc]) {
          await vscode.window.showTextDocument(doc);
          await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
        }
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        await fs.rm(agents.fsPath, { force: true });
      }
    });
  });
}
