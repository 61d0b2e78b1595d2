import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startingRules } from '../../../src/host/node/netproxy/index';
import { tempDir } from '../../unit/runtime/harness';

describe("the allowlist by default: hosts the person's user-level configuration names (git --global runs)", () => {
  let home = '';
  beforeEach(() => {
    home = tempDir('net-hosts');
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("from the person's home only: a workspace's .npmrc names no host, and nothing is allowed without configuration", () => {
    const ws = join(home, 'ws');
    mkdirSync(ws);
    writeFileSync(join(ws, '.npmrc'), 'registry=https://evil.example/\n');
    const env = { HOME: join(home, 'empty'), PATH: process.env['PATH'], XDG_CONFIG_HOME: join(home, 'empty', '.config') };
    mkdirSync(env.HOME);
    assert.deepEqual(startingRules([], env), []);
    writeFileSync(join(env.HOME, '.npmrc'), 'registry=https://registry.example/\n');
    mkdirSync(join(env.XDG_CONFIG_HOME, 'pip'), { recursive: true });
    writeFileSync(join(env.XDG_CONFIG_HOME, 'pip', 'pip.conf'), '[global]\nindex-url=https://pypi.example/simple\n');
    assert.deepEqual(
      startingRules(['extra.example:8443'], env).map((r) => `${r.host}${r.port ? `:${r.port}` : ''} ${r.source}`),
      ['registry.example ~/.npmrc', 'pypi.example ~/.config/pip/pip.conf', 'extra.example:8443 named by the person'],
    );
  });
});
