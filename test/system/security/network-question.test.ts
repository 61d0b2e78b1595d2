import { strict as assert } from 'node:assert';
import { startCommandProxy } from '../../../src/host/node/netproxy/index';

describe('VS Code: a host not on the network allowlist asks the person (the proxy reads the user configuration)', () => {
  it('a host remembered for the workspace is on the allowlist at the start, without reach to loopback or private addresses', async () => {
    const proxy = await startCommandProxy({
      allowHosts: [],
      approvedHosts: ['api.example:443'],
      howToAllow: () => '',
      env: { HOME: '/nonexistent', PATH: process.env['PATH'] },
      resolve: async () => ['127.0.0.1'],
    });
    try {
      assert.deepEqual(proxy.rules(), [{ host: 'api.example', port: 443, source: 'allowed for this workspace', named: false }]);
    } finally {
      await proxy.close();
    }
  });
});
