import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { BUILTIN_TOOLS } from '../../../src/core/tools/registry';
import type { RecordedRequest } from '../../support/fake-anthropic/server';
import { extensionApi, extensionPath, finalAnswer, toolUse, useFakeModel, workspaceRoot, writeWorkspaceFile } from './helpers';

// Every tool the model is offered works in the editor: each built-in tool and an MCP tool run
// through the real extension host's workspace (live buffers, the editor's search), and each one
// offered must succeed. A tool offered without the capability behind it fails this suite (the
// workspace is no git repository: git_commit and git_revert are not offered).

const config = () => vscode.workspace.getConfiguration('agentCheckpoints');

interface ResultBlock {
  readonly type: string;
  readonly tool_use_id?: string;
  readonly content?: unknown;
  readonly is_error?: boolean;
}

/** The tool_result of `id` in the last request the fake received, as text. */
function resultOf(requests: readonly RecordedRequest[], id: string): ResultBlock & { text: string } {
  for (const request of [...requests].reverse()) {
    const messages = (request.body as { messages?: { content: unknown }[] }).messages ?? [];
    for (const message of messages) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as ResultBlock[]) {
        if (block.type !== 'tool_result' || block.tool_use_id !== id) continue;
        const text =
          typeof block.content === 'string'
            ? block.content
            : ((block.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');
        return { ...block, text };
      }
    }
  }
  throw new Error(`no tool_result for ${id}`);
}

function offeredTools(request: RecordedRequest | undefined): string[] {
  return ((request?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map((t) => t.name);
}

export function everyToolSuite(): void {
  describe('Every tool in the editor', () => {
    it('runs each built-in tool and an MCP tool through the extension host; every tool offered succeeds', async function () {
      this.timeout(120_000);
      const api = await extensionApi();
      await writeWorkspaceFile('tools/alpha.txt', 'first line\nthe word zebracorn lives here\n');
      await writeWorkspaceFile('tools/nested/beta.md', '# beta\n');
      await writeWorkspaceFile('tools/gone.txt', 'delete me\n');
      const memoryFile = join(await fs.mkdtemp(join(tmpdir(), 'ac-every-tool-')), 'memory.jsonl');
      const server = join(extensionPath(), 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
      await config().update(
        'mcpServers',
        { memory: { command: process.execPath, args: [server], env: { MEMORY_FILE_PATH: memoryFile } } },
        vscode.ConfigurationTarget.Global,
      );
      const calls: Array<[string, string, unknown]> = [
        ['toolu_read', 'read_file', { path: 'tools/alpha.txt' }],
        ['toolu_list', 'list_dir', { path: 'tools', depth: 2 }],
        ['toolu_search', 'search_text', { pattern: 'zebracorn', path: 'tools' }],
        ['toolu_find', 'find_files', { pattern: '*.md', path: 'tools' }],
        ['toolu_write', 'write_file', { path: 'tools/new.txt', content: 'made by the agent\n' }],
        ['toolu_edit', 'edit_file', { path: 'tools/alpha.txt', old_string: 'first line', new_string: 'FIRST LINE' }],
        ['toolu_delete', 'delete_file', { path: 'tools/gone.txt' }],
        ['toolu_command', 'run_command', { command: 'echo command-ran' }],
        ['toolu_mcp', 'memory__read_graph', {}],
        ['toolu_plan', 'update_plan', { steps: [{ step: 'Use every tool once', status: 'in_progress' }] }],
      ];
      const fake = await useFakeModel(api, [...calls.map(([id, name, input]) => toolUse(id, name, input)), finalAnswer('All tools used.')]);
      try {
        fake.prompts.answer(/The agent wants to/, 'Allow for this run');
        fake.prompts.inputs.push('Use every tool once');
        fake.prompts.pick = (items) => items.find((i) => i.label.startsWith('No extra context'));
        const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run');
        assert.ok(started, `the run did not start: ${JSON.stringify(fake.prompts.messages)}`);
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `outcome ${JSON.stringify(outcome)}; log:\n${api.logText().slice(-3000)}`);

        const offered = offeredTools(fake.server.requests[0]);
        // The commit tools need a git repository: this workspace is none, so they are not offered.
        for (const tool of BUILTIN_TOOLS)
          assert.equal(offered.includes(tool.name), tool.needs !== 'git', `${tool.name} is offered in the editor unless it needs git`);
        assert.ok(offered.includes('memory__read_graph'), `the MCP tool is offered: ${offered.join(', ')}`);
        const used = new Set(calls.map(([, name]) => name));
        const untested = offered.filter((name) => !used.has(name) && !name.startsWith('memory__'));
        assert.deepEqual(untested, [], 'every built-in tool offered is exercised here');

        const requests = fake.server.requests;
        for (const [id, name] of calls) {
          const result = resultOf(requests, id);
          assert.notEqual(result.is_error, true, `${name} failed in the editor: ${result.text}`);
        }
        assert.match(resultOf(requests, 'toolu_read').text, /zebracorn/);
        assert.match(resultOf(requests, 'toolu_list').text, /beta\.md/, 'list_dir lists nested entries');
        assert.match(
          resultOf(requests, 'toolu_search').text,
          /alpha\.txt.*zebracorn|zebracorn[\s\S]*alpha\.txt|alpha\.txt[\s\S]*zebracorn/,
        );
        assert.match(resultOf(requests, 'toolu_find').text, /nested\/beta\.md/);
        assert.match(resultOf(requests, 'toolu_command').text, /command-ran/);
        assert.match(resultOf(requests, 'toolu_mcp').text, /entities/);
        assert.equal(resultOf(requests, 'toolu_plan').text, 'Plan updated: 0 of 1 done; now: Use every tool once.');
        const root = workspaceRoot();
        assert.equal(await fs.readFile(join(root, 'tools/new.txt'), 'utf8'), 'made by the agent\n');
        assert.match(await fs.readFile(join(root, 'tools/alpha.txt'), 'utf8'), /^FIRST LINE\n/);
        await assert.rejects(fs.stat(join(root, 'tools/gone.txt')), /ENOENT/);
      } finally {
        await config().update('mcpServers', undefined, vscode.ConfigurationTarget.Global);
        await fake.dispose();
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        await fs.rm(join(workspaceRoot(), 'tools'), { recursive: true, force: true });
      }
    });
  });
}
