import { tmpdir } from 'node:os';
import { linksWork } from '../../support/links';
import { strict as assert } from 'node:assert';
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_PROTECTED_PATHS, protectedPathReason } from '../../../src/core/tools/protected-paths';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { createCliApprover } from '../../../src/host/cli/approver';
import { answer, harness, lastToolResults, readText, reply, ScriptedApprover, SETTINGS, toolUse, type Harness } from '../runtime/harness';

const SETTINGS_JSON = '{ "agentCheckpoints.toolPolicies": { "run_command": { "replayPolicy": "auto" } } }';

describe('protected paths: writes that configure the editor or the tools always ask', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('matches the editor, dev container, direnv and git hook paths at any depth, and a setting only adds', () => {
    for (const path of [
      '.vscode/settings.json',
      '.vscode/tasks.json',
      'sub/.VSCode/x',
      'a.code-workspace',
      '.devcontainer/devcontainer.json',
    ])
      assert.ok(protectedPathReason(path), path);
    for (const path of ['.devcontainer.json', '.envrc', 'pkg/.envrc', '.githooks/pre-commit', '.husky/pre-push'])
      assert.ok(protectedPathReason(path), path);
    for (const path of ['src/main.ts', 'vscode/settings.json', '.vscodeignore.txt', 'README.md'])
      assert.equal(protectedPathReason(path), undefined, path);
    assert.equal(protectedPathReason('deploy/prod.yml'), undefined);
    assert.match(protectedPathReason('deploy/prod.yml', ['deploy/**'])!, /protected path deploy\/\*\*/);
    assert.ok(protectedPathReason('.vscode/settings.json', []), 'an empty extra list keeps the built-in ones');
    assert.ok(BUILTIN_PROTECTED_PATHS.length >= 7);
  });

  it('write_file of .vscode/settings.json with policy auto is asked, with the reason; denied -> not written', async () => {
    const approver = new ScriptedApprover(['deny']);
    h = await harness({
      approver,
      script: [reply([toolUse('w1', 'write_file', { path: '.vscode/settings.json', content: SETTINGS_JSON })]), answer('done')],
    });
    const outcome = await h.runtime({ tools: createToolRegistry({ overrides: { write_file: { replayPolicy: 'auto' } } }) }).start({
      task: 'x',
      settings: SETTINGS,
    });
    assert.equal(outcome.status, 'completed');
    assert.equal(approver.approvals.length, 1, 'the person was asked');
    assert.match(approver.approvals[0]!.reason ?? '', /\.vscode\/settings\.json configures the editor or the tools/);
    assert.equal(existsSync(join(h.root, '.vscode/settings.json')), false, 'nothing written');
    assert.match(lastToolResults(h.fake, 1)[0]!.content, /denied/);
  });

  it('an edit through a symlinked folder that resolves into .vscode is asked too; allowed once -> written', async function () {
    if (process.platform === 'win32' && !linksWork(tmpdir())) this.skip(); // Wine makes no links: not proven under Windows here
    const approver = new ScriptedApprover(['allow_for_run', 'deny']);
    h = await harness({
      approver,
      files: { '.vscode/settings.json': '{}' },
      script: [
        reply([toolUse('e1', 'edit_file', { path: 'cfg/settings.json', old_string: '{}', new_string: SETTINGS_JSON })]),
        reply([toolUse('d1', 'delete_file', { path: '.vscode/settings.json' })]),
        answer('done'),
      ],
    });
    symlinkSync(join(h.root, '.vscode'), join(h.root, 'cfg'));
    const outcome = await h.runtime().start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'completed');
    assert.equal(readText(h.root, '.vscode/settings.json'), SETTINGS_JSON, 'the approved edit was written');
    assert.equal(approver.approvals.length, 2, '"allow for the run" on a protected write allows that call only: the delete is asked again');
    assert.equal(existsSync(join(h.root, '.vscode/settings.json')), true, 'the denied delete did not happen');
  });

  it('a write_file of an ordinary file with policy auto is not asked', async () => {
    const approver = new ScriptedApprover([]);
    h = await harness({ approver, script: [reply([toolUse('w1', 'write_file', { path: 'src/a.txt', content: 'a' })]), answer('done')] });
    assert.equal((await h.runtime().start({ task: 'x', settings: SETTINGS })).status, 'completed');
    assert.equal(readText(h.root, 'src/a.txt'), 'a');
    assert.equal(approver.approvals.length, 0);
  });

  it('the CLI approver: --yes never approves a protected write; the run pauses with the reason', async () => {
    h = await harness({
      approver: undefined,
      script: [reply([toolUse('w1', 'write_file', { path: '.envrc', content: 'export PATH=/tmp/evil:$PATH' })]), answer('done')],
    });
    const outcome = await h
      .runtime({ approver: createCliApprover({ yes: true, interactive: false }) })
      .start({ task: 'x', settings: SETTINGS });
    assert.equal(outcome.status, 'paused');
    assert.match(outcome.reason ?? '', /\.envrc configures the editor or the tools.*--yes does not approve it/);
    assert.equal(existsSync(join(h.root, '.envrc')), false);
  });
});
