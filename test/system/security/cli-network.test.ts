import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { detectSandbox } from '../../../src/host/node/sandbox/index';
import { startFakeAnthropic } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { tempDir } from '../../unit/runtime/harness';

const hasBwrap = detectSandbox().kind === 'bwrap';

describe('headless CLI: the network of commands through the allowlist (the default)', function () {
  this.timeout(60_000);
  let scratch = '';
  let bundle = '';
  let web: Server;
  let port = 0;

  before(async function () {
    if (!hasBwrap) this.skip();
    scratch = tempDir('cli-net');
    bundle = await sharedCli();
    web = createServer((_req, res) => res.end('hello from the host\n'));
    await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
    port = (web.address() as AddressInfo).port;
  });
  after(async () => {
    if (web !== undefined) await new Promise<void>((done) => web.close(() => done()));
    if (scratch !== '') rmSync(scratch, { recursive: true, force: true });
  });

  /** One run whose model runs `command`; the tool result the model got back and the CLI's stderr. */
  async function runWith(command: string, flags: string[], home = scratch): Promise<{ result: string; stderr: string }> {
    const ws = tempDir('ws-net');
    const store = `${ws}-store`;
    const fake = await startFakeAnthropic([
      { content: [{ type: 'tool_use', id: 'toolu_net', name: 'run_command', input: { command } }], stop_reason: 'tool_use' },
      { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' },
    ]);
    try {
      const args = ['run', '--workspace', ws, '--store', store, '--task', 'x', '--trust', '--yes'];
      const run = await startCli(bundle, [...args, '--base-url', fake.url, ...flags], {
        PATH: process.env['PATH'],
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        ANTHROPIC_API_KEY: 'sk-ant-api03-cli-net-test-0123456789',
      }).done;
      assert.equal(run.code, 0, run.stderr);
      return { result: JSON.stringify(fake.requests[1]!.body), stderr: run.stderr };
    } finally {
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
      rmSync(store, { recursive: true, force: true });
    }
  }

  const curl = (): string => `curl -sS --max-time 10 --noproxy '' -w ' status=%{http_code}' http://localhost:${port}/ 2>&1; true`;

  it("a host nobody allowed is refused (the result says how to allow it); --allow-host HOST:PORT lets it through; the host's loopback is not the command's", async () => {
    const refused = await runWith(`${curl()}; curl -sS --max-time 5 http://127.0.0.1:${port}/ 2>&1; true`, []);
    assert.match(refused.stderr, /network: commands reach no host/);
    assert.match(
      refused.result,
      /refused localhost:\d+: localhost is not on the allowlist\. To allow it, run again with --allow-host localhost:\d+/,
    );
    assert.match(refused.result, /status=403/);
    assert.match(refused.result, /Failed to connect to 127\.0\.0\.1 port \d+/, "the command's own loopback has no such listener");
    assert.doesNotMatch(refused.result, /hello from the host/);
    const allowed = await runWith(curl(), ['--allow-host', `localhost:${port}`]);
    assert.match(allowed.stderr, new RegExp(`network: commands reach localhost:${port} \\(named by the person\\)`));
    assert.match(allowed.result, /hello from the host\\n status=200/);
  });

  it("the person's own ~/.npmrc names an allowed host; a workspace's .npmrc does not; --command-network on reaches the host's loopback as before", async () => {
    const home = tempDir('cli-net-home');
    mkdirSync(join(home, 'config'), { recursive: true });
    writeFileSync(join(home, '.npmrc'), `registry=http://localhost:${port}/\n`);
    try {
      const fromNpmrc = await runWith(`printf 'registry=http://127.0.0.1:9/\\n' > .npmrc; ${curl()}`, [], home);
      assert.match(fromNpmrc.stderr, new RegExp(`network: commands reach localhost:${port} \\(~/.npmrc\\)`));
      assert.match(fromNpmrc.result, /hello from the host\\n status=200/);
      const on = await runWith(`curl -sS --max-time 5 http://127.0.0.1:${port}/ 2>&1; true`, ['--command-network', 'on']);
      assert.match(on.result, /hello from the host/);
      assert.doesNotMatch(on.stderr, /network: commands reach/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
