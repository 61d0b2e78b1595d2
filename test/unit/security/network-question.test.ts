import { strict as assert } from 'node:assert';
import type { Prompts } from '../../../src/host/vscode/window/prompts';
import {
  ALLOW,
  ALLOW_WORKSPACE,
  ALLOWED_HOSTS_KEY,
  askForHost,
  REFUSE,
  type UserMemory,
} from '../../../src/host/vscode/window/network-question';

function memory(): UserMemory & { data: Record<string, unknown> } {
  const data: Record<string, unknown> = {};
  return { data, get: <T>(key: string) => data[key] as T | undefined, update: async (key, value) => void (data[key] = value) };
}

/** Prompts that answer every message with `answer` and record the questions. */
function answering(answer: string | undefined, asked: string[]): Prompts {
  return {
    inputBox: async () => undefined,
    quickPick: async () => undefined,
    message: async (_kind, text, _options, ...actions) => {
      asked.push(text);
      assert.deepEqual(actions, [ALLOW, ALLOW_WORKSPACE, REFUSE]);
      return answer;
    },
  };
}

describe('VS Code: a host not on the network allowlist asks the person', () => {
  it('Allow lets it through without remembering; Allow for This Workspace remembers it in user-scope memory; Refuse and a dismissed question refuse', async () => {
    const mem = memory();
    const asked: string[] = [];
    assert.equal(await askForHost(answering(ALLOW, asked), mem, 'ws-a', 'api.example', 443), true);
    assert.equal(mem.data[ALLOWED_HOSTS_KEY], undefined);
    assert.match(asked[0]!, /wants to reach api\.example:443, which is not on the network allowlist/);
    assert.equal(await askForHost(answering(ALLOW_WORKSPACE, asked), mem, 'ws-a', 'api.example', 443), true);
    assert.equal(await askForHost(answering(ALLOW_WORKSPACE, asked), mem, 'ws-a', 'api.example', 443), true);
    assert.deepEqual(mem.data[ALLOWED_HOSTS_KEY], { 'ws-a': ['api.example:443'] });
    assert.equal(await askForHost(answering(REFUSE, asked), mem, 'ws-b', 'x.example', 443), false);
    assert.equal(await askForHost(answering(undefined, asked), mem, 'ws-b', 'x.example', 443), false);
    assert.deepEqual(mem.data[ALLOWED_HOSTS_KEY], { 'ws-a': ['api.example:443'] });
  });
});
