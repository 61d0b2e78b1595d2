import { strict as assert } from 'node:assert';
import { request } from 'node:http';
import { formatCommandResult } from '../../../src/core/tools/run-command';
import { startNetProxy, type NetProxy } from '../../../src/host/node/netproxy/index';
import { parseHostRule } from '../../../src/host/node/netproxy/policy';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { parseMessage, WebviewToHost } from '../../../src/protocol/messages';
import { refusedHosts } from '../../../src/words/words';
import { ledgerEntry } from '../store/fixtures';
import { sampleRun } from '../webview/fixtures';

// A host the commands' network proxy refused is named on the call's row, which offers to allow it;
// allowing it reaches the running proxy at once (no restart, an earlier refusal forgotten).

const REFUSED_NOTE = [
  'The network proxy refused (commands reach only allowed hosts, through HTTP_PROXY/HTTPS_PROXY; there is no DNS in the sandbox):',
  '  refused example.com: not on the allowlist',
  '  refused 10.0.0.5:8080: a private address',
  '  refused example.com: not on the allowlist',
  'The person can allow a host (…)',
].join('\n');

const commandResult = (sandboxNote?: string): string =>
  formatCommandResult({
    exitCode: 6,
    signal: null,
    stdout: '  refused fake.test: printed by the command itself',
    stderr: '',
    durationMs: 12,
    truncated: false,
    ...(sandboxNote !== undefined ? { sandboxNote } : {}),
  } as Parameters<typeof formatCommandResult>[0]);

describe('refused hosts: named on the call, allowed from its row', () => {
  it("reads the proxy's refusals from the sandbox part only, each host once", () => {
    assert.deepEqual(refusedHosts(commandResult(REFUSED_NOTE)), ['example.com', '10.0.0.5:8080']);
    assert.deepEqual(refusedHosts(commandResult()), [], "the command's own output is not the proxy's word");
    assert.deepEqual(refusedHosts(undefined), []);
  });

  it('the allowHosts request is checked where it enters: one to ten hosts, none empty', () => {
    const ok = parseMessage(WebviewToHost, { type: 'request', requestId: 'r1', method: 'allowHosts', params: { hosts: ['example.com'] } });
    assert.ok(ok.ok);
    for (const hosts of [[], [''], Array.from({ length: 11 }, (_, i) => `h${i}.test`)]) {
      const bad = parseMessage(WebviewToHost, { type: 'request', requestId: 'r2', method: 'allowHosts', params: { hosts } });
      assert.equal(bad.ok, false, JSON.stringify(hosts));
    }
  });

  it("a run_command row carries the refused hosts; the header says the run's network and its allowlist", () => {
    const { state } = sampleRun(2);
    const record = ledgerEntry('net-1', 1, 'succeeded');
    assert.ok(record.type === 'ledger');
    const entry = { ...record.entry, toolName: 'run_command' };
    const view = buildRunView(
      {
        ...state,
        ledger: [...state.ledger, entry],
        // A save point after the call's result: the rows read results from the history the save points count.
        checkpoints: [
          ...state.checkpoints,
          { ...state.checkpoints.at(-1)!, checkpointId: 'c-net', messageCount: state.messages.length + 2 },
        ],
        messages: [
          ...state.messages,
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'net-1', name: 'run_command', input: { command: 'curl https://example.com' } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'net-1', content: commandResult(REFUSED_NOTE) }] },
        ],
        run: {
          ...state.run,
          settings: {
            ...state.run.settings,
            commands: { sandbox: 'bwrap', network: 'allowlist', allowlist: 'registry.npmjs.org (~/.npmrc)' },
          },
        },
      },
      new Map(),
      false,
    );
    const call = view.steps.flatMap((s) => s.calls).find((c) => c.callId === 'net-1');
    assert.ok(call, JSON.stringify(view.steps.map((s) => [s.stepId, s.calls.map((c) => c.callId)])));
    assert.deepEqual(call.refusedHosts, ['example.com', '10.0.0.5:8080']);
    assert.match(view.header.network ?? '', /allowlist proxy; allowed at the start: registry\.npmjs\.org \(~\/\.npmrc\)/);
  });

  describe('the running proxy', () => {
    let proxy: NetProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
      proxy = undefined;
    });

    /** A plain-HTTP request through the proxy's socket: its status (403 refused, 502 allowed but nothing listens). */
    const status = (socketPath: string, url: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request({ socketPath, path: url, method: 'GET', headers: { host: new URL(url).host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });

    it('a host refused at the question is reachable once the person allows it from the row, without a restart', async () => {
      let asked = 0;
      proxy = await startNetProxy({
        rules: [],
        resolve: async () => ['203.0.113.7'],
        ask: async () => {
          asked += 1;
          return false;
        },
        howToAllow: (host) => `allow ${host}`,
      });
      assert.equal(await status(proxy.socket, 'http://refused.test:9/'), 403);
      assert.equal(await status(proxy.socket, 'http://refused.test:9/'), 403);
      assert.equal(asked, 1, 'asked once per host');
      proxy.allow({ ...parseHostRule('refused.test:9', 'allowed from the Timeline')!, named: false });
      assert.notEqual(await status(proxy.socket, 'http://refused.test:9/'), 403, 'allowed now: the proxy connects (nothing listens there)');
      assert.equal(asked, 1);
    });
  });
});
