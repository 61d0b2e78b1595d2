import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseCli, UsageError } from '../../../src/host/cli/args';
import { readSettingsFrom, SettingsError, type SettingsSource } from '../../../src/host/vscode/window/settings-read';

const ROOT = resolve(__dirname, '..', '..', '..');

describe('what commands may have of the host environment: the person says, at user scope or on the command line', () => {
  it('agentCheckpoints.commandEnvironment comes from user scope only, is restricted in untrusted workspaces, and takes names or patterns', () => {
    const warnings: string[] = [];
    const source = (value: { globalValue?: unknown; workspaceValue?: unknown }): SettingsSource => ({
      inspect: (key) => (key === 'commandEnvironment' ? value : undefined),
      get: (key) => (key === 'commandEnvironment' ? (value.workspaceValue ?? value.globalValue) : undefined),
    });
    const settings = readSettingsFrom(source({ globalValue: ['JAVA_OPTS', 'MYAPP_*'], workspaceValue: ['*'] }), new Set(), (m) =>
      warnings.push(m),
    );
    assert.deepEqual(settings.commandEnvironment, ['JAVA_OPTS', 'MYAPP_*']);
    assert.ok(warnings.some((w) => w.includes('agentCheckpoints.commandEnvironment in the workspace or folder settings is ignored')));
    assert.throws(() => readSettingsFrom(source({ globalValue: ['A=B'] })), SettingsError);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('agentCheckpoints.commandEnvironment'));
    assert.equal(pkg.contributes.configuration.properties['agentCheckpoints.commandEnvironment']?.scope, 'application');
  });

  it('--pass-env NAME is repeatable, takes patterns and refuses what is not a name', () => {
    const run = ['run', '--workspace', 'w', '--task', 't'];
    assert.deepEqual(parseCli([...run, '--pass-env', 'JAVA_OPTS', '--pass-env', 'MYAPP_*']).passEnv, ['JAVA_OPTS', 'MYAPP_*']);
    assert.deepEqual(parseCli(run).passEnv, []);
    assert.deepEqual(parseCli(['worker', '--store', 'postgres://h/db', '--workspace', 'w', '--pass-env', 'X']).passEnv, ['X']);
    assert.throws(() => parseCli([...run, '--pass-env', 'A=B']), UsageError);
    assert.throws(() => parseCli([...run, '--pass-env', '']), UsageError);
  });
});
