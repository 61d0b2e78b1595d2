import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { ModelProvider } from '../../../src/core/model/provider';
import { silentLog, type Log } from '../../../src/core/ports';
import type { RuntimeEvent } from '../../../src/core/runtime/types';
import { BUILTIN_TOOLS, type AnyTool } from '../../../src/core/tools/registry';
import {
  chooseProvider,
  commandLaunch,
  createAgentHost,
  createProvider,
  sandboxRequest,
  startMcp,
  type CommandSettings,
  type ProviderSources,
} from '../../../src/host/node/agent-host/index';
import type { StartOptions } from '../../../src/host/node/mcp/client';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { shellOf } from '../../../src/host/node/shell';
import { storeAddressOf } from '../../../src/host/node/store-factory';
import { MemoryCheckpointStore } from '../../support/memory-store';
import { countingRunner, ScriptedApprover, SETTINGS, tempDir } from './harness';

// The Node agent host (src/host/node/agent-host/): the choices the CLI and the extension share.

const REPLAY = `${JSON.stringify({ id: 'msg_1', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 1 } })}\n`;

/** Sources that say which of them was asked; the key source refuses as a host does when it has none. */
function sources(
  asked: string[],
  options: { key?: string; languageModels?: () => ModelProvider; anthropic?: ProviderSources['anthropic'] } = {},
): ProviderSources {
  return {
    replay: async () => (asked.push('replay'), { text: REPLAY, source: 'script.jsonl' }),
    apiKey: async () => {
      asked.push('key');
      if (options.key === undefined) throw new Error('no key here');
      return { key: options.key, source: 'test' };
    },
    baseUrl: () => 'http://127.0.0.1:9',
    ...(options.languageModels !== undefined ? { languageModels: options.languageModels } : {}),
    anthropic: options.anthropic ?? (() => Promise.reject(new Error('the test loads no SDK'))),
  };
}

describe('the Node agent host (host/node/agent-host)', () => {
  describe('provider choice', () => {
    const configured = { kind: 'anthropic', model: 'configured-model' };
    const available = ['anthropic', 'replay', 'vscode-lm'];

    it('a new run takes the configured provider and model; a provider the person names wins', () => {
      assert.deepEqual(chooseProvider({ configured, available }), configured);
      assert.deepEqual(chooseProvider({ named: 'replay', configured, available }), { kind: 'replay', model: 'configured-model' });
    });

    it('a run going on keeps the provider and model it was recorded with, unless the person names one', () => {
      const recorded = { provider: 'replay', model: 'recorded-model' };
      assert.deepEqual(chooseProvider({ configured, recorded, available }), { kind: 'replay', model: 'recorded-model' });
      assert.deepEqual(chooseProvider({ named: 'anthropic', configured, recorded, available }), {
        kind: 'anthropic',
        model: 'configured-model',
      });
    });

    it('a recorded provider this host cannot build falls back to the configured one (the CLI has no VS Code models)', () => {
      const recorded = { provider: 'vscode-lm', model: 'copilot-model' };
      assert.deepEqual(chooseProvider({ configured, recorded, available: ['anthropic', 'replay'] }), configured);
    });

    it('builds the chosen provider from the host sources: replay never asks for a key, the key is never logged', async () => {
      const asked: string[] = [];
      const lines: string[] = [];
      const log: Log = { log: (_level, message) => lines.push(message) };
      const replay = await createProvider({ kind: 'replay', model: 'm' }, sources(asked), log);
      const answer = await replay.complete({ model: 'm', messages: [{ role: 'user', content: 'go' }], tools: [], maxTokens: 10 });
      assert.equal(answer.stopReason, 'end_turn');
      assert.deepEqual(asked, ['replay']);
      const built: unknown[] = [];
      const fake = { name: 'anthropic' } as ModelProvider;
      const anthropic = async () => ({ createAnthropicProvider: (options: unknown) => (built.push(options), fake) });
      assert.equal(
        await createProvider({ kind: 'anthropic', model: 'm' }, sources(asked, { key: 'sk-secret-value', anthropic }), log),
        fake,
      );
      assert.deepEqual(asked, ['replay', 'key']);
      assert.deepEqual(built, [{ apiKey: 'sk-secret-value', model: 'm', baseURL: 'http://127.0.0.1:9' }]);
      assert.ok(lines.some((l) => l.includes('through the Anthropic API (key from test) at http://127.0.0.1:9')));
      assert.ok(!lines.some((l) => l.includes('sk-secret-value')), 'the key is not in the log');
    });

    it("refuses with the host's own error when a provider's source has nothing; VS Code's models only where the host has them", async () => {
      const asked: string[] = [];
      await assert.rejects(createProvider({ kind: 'anthropic' }, sources(asked), silentLog), /no key here/);
      const lm = { name: 'lm' } as ModelProvider;
      assert.equal(await createProvider({ kind: 'vscode-lm' }, sources(asked, { languageModels: () => lm }), silentLog), lm);
      await assert.rejects(createProvider({ kind: 'vscode-lm' }, sources(asked), silentLog), /no key here/);
    });
  });

  describe('the sandbox request', () => {
    const env = { HOME: '/home/person', PATH: '/usr/bin:/bin' };
    const settings = { sandbox: 'auto', network: 'off' } as const;

    it('hides a file store folder, the person state and the host folders; none with the sandbox off', () => {
      const request = sandboxRequest(
        settings,
        { roots: ['/ws'], store: storeAddressOf('/state/store'), hidden: ['/editor/user'] },
        undefined,
        env,
      )!;
      assert.deepEqual(request.roots, ['/ws']);
      assert.ok(request.hidden.includes('/state/store'));
      assert.ok(request.hidden.includes('/editor/user'));
      assert.ok(request.hidden.includes('/home/person/.local/state/agent-checkpoints'));
      assert.equal(request.network, false);
      assert.equal(
        sandboxRequest({ ...settings, sandbox: 'off' }, { roots: ['/ws'], store: storeAddressOf('/state/store') }, undefined, env),
        undefined,
      );
    });

    it('with a PostgreSQL store hides the socket folder its address names, never the address itself', () => {
      const url = 'postgres://agent:pw-in-url@db.internal:5432/runs?host=/var/run/pgsock';
      const request = sandboxRequest(settings, { roots: ['/ws'], store: storeAddressOf(url) }, undefined, env)!;
      assert.ok(request.hidden.includes('/var/run/pgsock'));
      assert.deepEqual(
        request.hidden.filter((h) => /postgres|pw-in-url|db\.internal/.test(h)),
        [],
      );
    });

    it('gives the proxy only with the allowlist; the network only when it is on', () => {
      const proxy = { socket: '/tmp/proxy.sock', takeRefusals: () => [] };
      const places = { roots: ['/ws'], store: storeAddressOf('/s') };
      assert.equal(sandboxRequest({ ...settings, network: 'allowlist' }, places, proxy, env)!.proxy, proxy);
      assert.equal(sandboxRequest({ ...settings, network: 'on' }, places, proxy, env)!.proxy, undefined);
      assert.equal(sandboxRequest({ ...settings, network: 'on' }, places, proxy, env)!.network, true);
    });
  });

  describe('the command launch', () => {
    it('reads the settings at each command: the sandbox and the variables passed follow a change', async () => {
      const ws = tempDir('launch');
      let current: CommandSettings = { sandbox: 'off', network: 'on', passEnv: ['AC_LAUNCH_TEST'] };
      process.env['AC_LAUNCH_TEST'] = 'passed-value';
      try {
        const launch = commandLaunch({
          roots: [ws],
          store: storeAddressOf(tempDir('launch-store')),
          settings: () => current,
          proxy: () => undefined,
          shell: () => shellOf(process.platform, process.env),
          warn: () => undefined,
        });
        const runner = launch.runner();
        assert.equal(launch.sandbox(), undefined);
        const first = await runner.run('echo "[$AC_LAUNCH_TEST]"', { cwd: ws, timeoutMs: 10_000, maxOutputBytes: 10_000 });
        assert.match(first.stdout, /\[passed-value\]/);
        assert.match(first.sandboxNote ?? '', /WITHOUT a sandbox/);
        current = { sandbox: 'auto', network: 'on', passEnv: [] };
        assert.deepEqual(launch.sandbox()?.roots, [ws]);
        assert.deepEqual(launch.passEnv(), []);
      } finally {
        delete process.env['AC_LAUNCH_TEST'];
      }
    });

    it('starts MCP servers in the launch: its sandbox and variables, the built-in names reserved; none, and no client loaded, when none is allowed', async () => {
      const seen: { reserved?: readonly string[]; sandboxed: boolean; passEnv?: readonly string[] }[] = [];
      const client = async () => ({
        startMcpServers: async (_entries: unknown, options: StartOptions) => {
          seen.push({ reserved: options.reserved, sandboxed: options.sandbox?.() !== undefined, passEnv: options.passEnv });
          return { tools: [], failures: [], close: async () => undefined };
        },
      });
      const launch = { sandbox: () => ({ roots: ['/ws'] }) as never, passEnv: () => ['NPM_CONFIG_CACHE'] };
      const none = await startMcp([], { log: silentLog, launch, client });
      assert.deepEqual([none.tools, none.failures, seen], [[], [], []]);
      await none.close();
      const entry = { name: 'docs', origin: 'cli', source: 'cli', config: { command: 'docs-server' } } as never;
      await startMcp([entry], { log: silentLog, launch, client });
      assert.deepEqual(seen, [{ reserved: BUILTIN_TOOLS.map((t) => t.name), sandboxed: true, passEnv: ['NPM_CONFIG_CACHE'] }]);
    });
  });

  describe('a session', () => {
    it('goes on with a run on its recorded provider, adds the session tools to every agent and closes them once', async () => {
      const asked: string[] = [];
      let closed = 0;
      const extra: AnyTool = { ...BUILTIN_TOOLS[0]!, name: 'session_tool' };
      const store = new MemoryCheckpointStore();
      const host = createAgentHost({
        store,
        workspace: new NodeWorkspace({ roots: [tempDir('session')] }),
        approver: new ScriptedApprover(),
        commands: () => countingRunner(),
        clock: { now: () => Date.now() },
        log: silentLog,
        git: { facts: async () => ({ isRepo: false, dirtyPaths: [] }) },
        providers: sources(asked),
        extraTools: async () => ({ tools: [extra], close: async () => void (closed += 1) }),
      });
      const model = await host.provider({
        configured: { kind: 'anthropic' },
        recorded: { provider: 'replay', model: 'recorded' },
        available: ['anthropic', 'replay'],
      });
      assert.deepEqual(asked, ['replay'], 'the recorded replay provider, no key asked');
      const session = await host.open(model, { protectedPaths: ['secret/**'] });
      const events: RuntimeEvent[] = [];
      const agent = session.agent((event) => events.push(event));
      assert.ok(agent.tools.get('session_tool'));
      const outcome = await agent.runtime.start({ task: 'go', settings: SETTINGS, system: 'test' });
      assert.equal(outcome.status, 'completed');
      assert.ok(events.some((e) => e.type === 'checkpoint'));
      assert.notEqual(session.agent(() => undefined).runtime, agent.runtime, 'a new agent per call (a worker has one per run)');
      await session.close();
      assert.equal(closed, 1);
      await assert.rejects(
        host.withSession(model, async () => Promise.reject(new Error('the command failed'))),
        /the command failed/,
      );
      assert.equal(closed, 2, 'a session a command failed in is closed too');
    });
  });

  describe('one way to build each part', () => {
    const SRC = join(__dirname, '..', '..', '..', 'src');
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const full = join(dir, name);
        return statSync(full).isDirectory() ? files(full) : full.endsWith('.ts') ? [full] : [];
      });
    const builders = (pattern: RegExp): string[] =>
      files(SRC)
        .filter((f) => pattern.test(readFileSync(f, 'utf8')))
        .map((f) => relative(SRC, f).split(sep).join('/'));

    for (const [what, pattern, place] of [
      ['the agent runtime', /new AgentRuntime\(/, 'core/runtime/agent.ts'],
      ['the command runner', /(?<!function )createNodeCommandRunner\(/, 'host/node/agent-host/commands.ts'],
      ['the sandbox request', /programDirs: \[/, 'host/node/agent-host/commands.ts'],
      ['the model providers', /(?<!function )(?:createAnthropicProvider|createReplayProvider)\(/, 'host/node/agent-host/provider.ts'],
      ['the MCP servers', /(?<!function )startMcpServers\(/, 'host/node/agent-host/mcp.ts'],
    ] as const)
      it(`builds ${what} in one place (${place})`, () => assert.deepEqual(builders(pattern), [place]));

    it('the host loads no module lazily itself: the CLI hands it its loaders (a dynamic import in the extension bundle broke its start)', () => {
      const lazy = files(join(SRC, 'host', 'node', 'agent-host')).filter((f) => /(?<![\w.])import\(\s*['"]/.test(readFileSync(f, 'utf8')));
      assert.deepEqual(lazy, []);
    });
  });
});
