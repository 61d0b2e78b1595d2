import { strict as assert } from 'node:assert';
import { keyInHostEnvironmentWarning } from '../../../src/host/vscode/window/api-key';

describe('the key in the environment VS Code was started with', () => {
  it('is reported with the fix (Set API Key, then unset the variable), and nothing is said without it', () => {
    const warning = keyInHostEnvironmentWarning({ ANTHROPIC_API_KEY: 'sk-ant-secret', PATH: '/bin' });
    assert.match(warning ?? '', /ANTHROPIC_API_KEY is in the environment VS Code was started with/);
    assert.match(warning ?? '', /Agent: Set API Key.*unset the variable/);
    assert.ok(!warning!.includes('sk-ant-secret'), 'the warning never holds the key');
    assert.match(keyInHostEnvironmentWarning({ ANTHROPIC_AUTH_TOKEN: 't' }) ?? '', /ANTHROPIC_AUTH_TOKEN/);
    assert.equal(keyInHostEnvironmentWarning({ PATH: '/bin', ANTHROPIC_API_KEY: '' }), undefined);
  });
});
