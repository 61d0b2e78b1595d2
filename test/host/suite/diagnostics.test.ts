import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { EditorDiagnostics } from '../../../src/host/vscode/run/editor-diagnostics';
import { WorkspacePaths } from '../../../src/host/node/path-rules';
import type { RecordedRequest } from '../../support/fake-anthropic/server';
import { extensionApi, finalAnswer, toolUse, useFakeModel, waitFor, workspaceRoot, writeWorkspaceFile } from './helpers';

// Problems after an edit, with VS Code's own TypeScript service (the built-in extension, which
// bundles its TypeScript: no network): the agent edits a file into a type error, and the tool result
// names that error with its line, not the one the file already had; the Timeline reads it from the
// run's record.

const config = () => vscode.workspace.getConfiguration('agentCheckpoints');

/** The tool_result text of `id` in the requests the fake received. */
function resultText(requests: readonly RecordedRequest[], id: string): string {
  for (const request of requests) {
    for (const message of (request.body as { messages?: { content: unknown }[] }).messages ?? []) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as { type: string; tool_use_id?: string; content?: unknown }[]) {
        if (block.type !== 'tool_result' || block.tool_use_id !== id) continue;
        if (typeof block.content === 'string') return block.content;
        return ((block.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');
      }
    }
  }
  throw new Error(`no tool_result for ${id}`);
}

const BEFORE = ['// typed.ts', 'export const old: string = 1;', 'export const answer: number = 42;', ''].join('\n');

export function diagnosticsSuite(): void {
  describe('Problems after an edit', () => {
    it('names the type error the edit made, with its line, and not the one the file had; the Timeline shows it', async function () {
      this.timeout(240_000);
      const api = await extensionApi();
      const uri = await writeWorkspaceFile('diag/typed.ts', BEFORE);
      // The file is open, as a person's would be, and its service has spoken (a cold TypeScript
      // server takes seconds here): the error it had is what "before" holds.
      await vscode.window.showTextDocument(uri);
      await waitFor('TypeScript to report the error the file has', () => vscode.languages.getDiagnostics(uri).length > 0, 120_000);
      // This machine is shared and slow: a longer quiet spell than a person's default.
      await config().update('diagnostics.quietMs', 2000, vscode.ConfigurationTarget.Global);
      await config().update('diagnostics.maxWaitMs', 30_000, vscode.ConfigurationTarget.Global);
      const fake = await useFakeModel(api, [
        toolUse('toolu_diag', 'edit_file', {
          path: 'diag/typed.ts',
          old_string: '// typed.ts\n',
          new_string:
            '// typed.ts\nexport function twice(n: number): number {\n  return n * 2;\n}\nexport const wrong: number = twice("2");\n',
        }),
        finalAnswer('Edited.'),
      ]);
      try {
        fake.prompts.inputs.push('Add twice()');
        fake.prompts.pick = (items) => items.find((i) => i.label.startsWith('No extra context'));
        const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run');
        assert.ok(started, `the run did not start: ${JSON.stringify(fake.prompts.messages)}`);
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `outcome ${JSON.stringify(outcome)}; log:\n${api.logText().slice(-3000)}`);

        const text = resultText(fake.server.requests, 'toolu_diag');
        assert.match(text, /^edited diag\/typed\.ts\n\nThe editor reports 1 new problem in the changed files:\n/, text);
        assert.match(
          text,
          /diag\/typed\.ts:5: error: Argument of type 'string' is not assignable to parameter of type 'number'\. \(ts 2345\)/,
          text,
        );
        assert.ok(
          !text.includes("Type 'number' is not assignable to type 'string'"),
          `the error the file had (now line 6) is not new:\n${text}`,
        );

        const view = buildRunView(await api.timelineBackend.readRun(started.runId), new Map(), false);
        const call = view.steps.flatMap((s) => s.calls).find((c) => c.callId === 'toolu_diag');
        assert.deepEqual(
          call?.problems?.map((p) => `${p.path}:${p.line} ${p.severity} ${p.origin}`),
          ['diag/typed.ts:5 error ts 2345'],
        );
      } finally {
        await config().update('diagnostics.quietMs', undefined, vscode.ConfigurationTarget.Global);
        await config().update('diagnostics.maxWaitMs', undefined, vscode.ConfigurationTarget.Global);
        await fake.dispose();
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        await fs.rm(join(workspaceRoot(), 'diag'), { recursive: true, force: true });
      }
    });

    it('a file no editor holds is unchecked before a write and, in no tab, not looked at after it; one open in a tab is checked', async function () {
      this.timeout(180_000);
      const service = new EditorDiagnostics(new WorkspacePaths([workspaceRoot()], undefined), () => ({ quietMs: 500, maxWaitMs: 5000 }));
      const uri = await writeWorkspaceFile('diag/closed.ts', BEFORE);
      try {
        assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString()), 'no editor holds the file');
        assert.deepEqual(await service.snapshot(['diag/closed.ts', 'diag/not-there-yet.ts']), {
          reported: [],
          unchecked: ['diag/closed.ts'],
        });
        // VS Code's TypeScript checks only files in a tab: opened unshown, the file is not looked at.
        const unshown = await service.settled(['diag/closed.ts'], new AbortController().signal);
        assert.deepEqual(unshown, { reported: [], unchecked: ['diag/closed.ts'] });
        await vscode.window.showTextDocument(uri);
        await waitFor('TypeScript to report the error the file has', () => vscode.languages.getDiagnostics(uri).length > 0, 120_000);
        const open = await service.snapshot(['diag/closed.ts']);
        assert.deepEqual(open.unchecked, []);
        assert.deepEqual(
          open.reported.map((d) => `${d.path}:${d.line} ${d.severity} ${d.source ?? ''} ${d.code ?? ''}`),
          ['diag/closed.ts:2 error ts 2322'],
        );
        const shown = await service.settled(['diag/closed.ts'], new AbortController().signal);
        assert.deepEqual([shown.reported.length, shown.unchecked], [1, []]);
      } finally {
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        await fs.rm(join(workspaceRoot(), 'diag'), { recursive: true, force: true });
      }
    });
  });
}
