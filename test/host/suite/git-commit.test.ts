import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { RecordedRequest } from '../../support/fake-anthropic/server';
import { extensionApi, finalAnswer, toolUse, useFakeModel, workspaceRoot } from './helpers';

// git_commit in the editor: offered once the workspace is a git repository, asked in a dialog
// that shows the commands, the files and the author, without "Allow for this run", and the commit
// is the person's (their global git configuration: a HOME of the test's own, for this test only).

function offeredTools(request: RecordedRequest | undefined): string[] {
  return ((request?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map((t) => t.name);
}

export function gitCommitSuite(): void {
  describe('git_commit in the editor', () => {
    it('is offered in a git repository, asks every time with the commands and the author, and commits as the person', async function () {
      this.timeout(120_000);
      const api = await extensionApi();
      const root = workspaceRoot();
      const home = await fs.mkdtemp(join(tmpdir(), 'ac-git-home-'));
      await fs.writeFile(join(home, '.gitconfig'), '[user]\n\tname = Pat Person\n\temail = pat@example.com\n');
      const env = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
      execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root, env });
      const savedHome = process.env.HOME;
      process.env.HOME = home;
      const fake = await useFakeModel(api, [
        toolUse('toolu_write', 'write_file', { path: 'gitdemo/a.txt', content: 'made by the agent\n' }),
        toolUse('toolu_commit', 'git_commit', { message: 'Add a.txt', paths: ['gitdemo/a.txt'] }),
        finalAnswer('Committed.'),
      ]);
      try {
        fake.prompts.answer(/The agent wants to/, 'Allow for this run').answer(/The agent wants to/, 'Allow once');
        fake.prompts.inputs.push('Write a.txt and commit it');
        fake.prompts.pick = (items) => items.find((i) => i.label.startsWith('No extra context'));
        const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run');
        assert.ok(started, `the run did not start: ${JSON.stringify(fake.prompts.messages)}`);
        const outcome = await api.whenIdle();
        assert.equal(outcome?.status, 'completed', `outcome ${JSON.stringify(outcome)}; log:\n${api.logText().slice(-3000)}`);
        assert.ok(offeredTools(fake.server.requests[0]).includes('git_commit'), 'offered in a repository');
        const asked = fake.prompts.saw(/The agent wants to commit/);
        assert.ok(asked, `asked: ${JSON.stringify(fake.prompts.messages.map((m) => m.text))}`);
        for (const part of [
          'gitdemo/a.txt',
          'Pat Person <pat@example.com>',
          'commit-tree',
          'core.hooksPath=/dev/null',
          'nothing is pushed',
        ])
          assert.ok(asked.text.includes(part), `the dialog shows ${part}:\n${asked.text}`);
        assert.ok(!asked.actions.includes('Allow for this run'), `no "for this run": ${asked.actions.join(', ')}`);
        const author = execFileSync('git', ['log', '-1', '--format=%an <%ae>|%s'], { cwd: root, env, encoding: 'utf8' }).trim();
        assert.equal(author, 'Pat Person <pat@example.com>|Add a.txt');
      } finally {
        process.env.HOME = savedHome;
        await fake.dispose();
        await fs.rm(join(root, '.git'), { recursive: true, force: true });
        await fs.rm(join(root, 'gitdemo'), { recursive: true, force: true });
        await fs.rm(home, { recursive: true, force: true });
      }
    });
  });
}
