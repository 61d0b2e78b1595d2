import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { openFileStore } from '../../../src/host/node/store-factory';
import { extensionApi, extensionPath, ScriptedPrompts, workspaceRoot } from './helpers';

// The editor's models and tools in a run: the fixture extension (test/host/lm-fixture) registers a
// chat model that plays a script and a language-model tool; MCP servers come from the workspace's
// .vscode/mcp.json (the real memory server from node_modules).

interface FixtureStep {
  readonly text?: string;
  readonly toolCall?: string;
  readonly callId?: string;
  readonly input?: object;
}
interface FixtureRequest {
  readonly messages: { role: number; parts: { text?: string; toolResult?: string }[] }[];
  readonly tools: string[];
}
interface Fixture {
  setScript(steps: readonly FixtureStep[]): void;
  readonly state: { requests: FixtureRequest[]; toolCalls: unknown[] };
}

const config = () => vscode.workspace.getConfiguration('agentCheckpoints');

async function fixture(): Promise<Fixture> {
  const ext = vscode.extensions.getExtension<Fixture>('agent-checkpoints-test.lm-fixture');
  assert.ok(ext, 'the fixture extension is loaded');
  return ext.activate();
}

async function useVscodeModel(): Promise<string> {
  const models = await vscode.lm.selectChatModels({ vendor: 'acfixture' });
  assert.equal(models.length, 1, 'the fixture model is offered by vscode.lm.selectChatModels');
  await config().update('provider', 'vscode-lm', vscode.ConfigurationTarget.Global);
  await config().update('model', models[0]!.id, vscode.ConfigurationTarget.Global);
  return models[0]!.id;
}

async function resetSettings(): Promise<void> {
  for (const key of ['provider', 'model', 'languageModelTools', 'maxCostUsd'])
    await config().update(key, undefined, vscode.ConfigurationTarget.Global);
}

/** Runs the agent on `task` with scripted prompts; returns the run id after it ended completed. */
async function runTask(prompts: ScriptedPrompts, task: string): Promise<string> {
  const api = await extensionApi();
  api.usePrompts(prompts);
  try {
    prompts.inputs.push(task);
    prompts.pick = (items) => items.find((i) => i.label.startsWith('No extra context'));
    const started = await vscode.commands.executeCommand<{ runId: string } | undefined>('agentCheckpoints.run');
    assert.ok(started, `the run did not start: ${JSON.stringify(prompts.messages)}`);
    const outcome = await api.whenIdle();
    assert.equal(outcome?.status, 'completed', `outcome ${JSON.stringify(outcome)}; log:\n${api.logText().slice(-3000)}`);
    return started.runId;
  } finally {
    api.usePrompts(undefined);
  }
}

function toolResult(request: FixtureRequest | undefined, callId: string): string | undefined {
  return request?.messages.flatMap((m) => m.parts).find((p) => p.toolResult === callId)?.text;
}

export function lmSuite(): void {
  describe("VS Code's models and tools, MCP servers, under the ledger", () => {
    afterEach(resetSettings);

    it('provider vscode-lm: a chat model VS Code offers calls a language-model tool (classed non-idempotent, asked first)', async () => {
      const api = await extensionApi();
      const fx = await fixture();
      const modelId = await useVscodeModel();
      await config().update('languageModelTools', ['acfixture_counter'], vscode.ConfigurationTarget.Global);
      await config().update('maxCostUsd', 3, vscode.ConfigurationTarget.Global);
      fx.setScript([
        { text: 'Counting.', toolCall: 'vscode__acfixture_counter', callId: 'call_count', input: { note: 'first' } },
        { text: 'Counted once.' },
      ]);
      const prompts = new ScriptedPrompts().answer(/^The agent wants to call vscode__acfixture_counter/, 'Allow once');
      const runId = await runTask(prompts, 'count once');
      assert.match(
        prompts.saw(/vscode__acfixture_counter/)?.text ?? '',
        /\[destructive, open world\]/,
        'no annotations: the approval says so',
      );
      assert.deepEqual(fx.state.toolCalls, [{ note: 'first' }], 'vscode.lm.invokeTool ran the tool once');
      assert.ok(fx.state.requests[0]?.tools.includes('vscode__acfixture_counter') && fx.state.requests[0].tools.includes('read_file'));
      assert.equal(toolResult(fx.state.requests[1], 'call_count'), 'count 1', 'the model heard the tool result');
      const state = await openFileStore(api.storagePath).readRun(runId);
      assert.equal(state.run.settings.provider, 'vscode-lm');
      assert.equal(state.run.settings.model, modelId);
      const entry = state.ledger.find((e) => e.callId === 'call_count');
      assert.deepEqual([entry?.status, entry?.idempotency, entry?.replayPolicy], ['succeeded', 'non_idempotent', 'ask']);
      assert.ok(state.budget.outputTokens > 0, 'usage counted with the model tokenizer');
      assert.equal(state.run.settings.maxContextTokens, 100000, "the context budget is the model's maxInputTokens");
      const unenforced = /cost limit \(\$3\.00\) cannot be enforced for model/;
      assert.ok(
        state.notes.some((n) => n.kind === 'warning' && unenforced.test(n.text)),
        'the run records that its cost limit cannot be enforced',
      );
      assert.ok(prompts.saw(unenforced), 'the person is told');
      assert.match(api.logText(), unenforced);
    });

    it('a vscode-lm run goes on with its own provider and model after the settings changed', async () => {
      const api = await extensionApi();
      const fx = await fixture();
      const modelId = await useVscodeModel();
      fx.setScript([{ text: 'First answer.' }, { text: 'Second answer, same model.' }]);
      const runId = await runTask(new ScriptedPrompts(), 'answer twice');
      await resetSettings();
      assert.equal(config().get('provider'), 'anthropic', 'the setting now names another provider');
      const outcome = await api.continueRun(runId, 'and once more');
      assert.equal(outcome?.status, 'completed', `${JSON.stringify(outcome)}\n${api.logText().slice(-2000)}`);
      assert.equal(fx.state.requests.length, 2, 'both answers came from the VS Code model (the Anthropic provider has no key here)');
      const state = await openFileStore(api.storagePath).readRun(runId);
      assert.equal(state.run.settings.model, modelId);
    });

    it("a workspace's .vscode/mcp.json server starts only once allowed; the allowance is remembered and revocable", async () => {
      const fx = await fixture();
      await useVscodeModel();
      const memory = join(await fs.mkdtemp(join(tmpdir(), 'ac-host-mcp-')), 'memory.jsonl');
      const server = join(extensionPath(), 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');
      const file = join(workspaceRoot(), '.vscode', 'mcp.json');
      await fs.mkdir(join(workspaceRoot(), '.vscode'), { recursive: true });
      await fs.writeFile(
        file,
        JSON.stringify({ servers: { memory: { command: process.execPath, args: [server], env: { MEMORY_FILE_PATH: memory } } } }),
      );
      const allowPrompt = /names the MCP server "memory"/;
      try {
        fx.setScript([{ toolCall: 'memory__read_graph', callId: 'call_graph', input: {} }, { text: 'The graph is empty.' }]);
        const first = new ScriptedPrompts().answer(allowPrompt, 'Allow');
        await runTask(first, 'read the memory graph');
        assert.ok(first.saw(allowPrompt), 'asked before the server started');
        assert.match(toolResult(fx.state.requests[1], 'call_graph') ?? '', /"entities"/, 'read-only: ran without an approval');
        assert.equal(first.messages.filter((m) => /The agent wants to/.test(m.text)).length, 0);

        fx.setScript([{ text: 'Tools listed.' }]);
        const second = new ScriptedPrompts();
        await runTask(second, 'again');
        assert.equal(second.saw(allowPrompt), undefined, 'the allowance is remembered for this workspace');
        assert.ok(fx.state.requests[0]?.tools.includes('memory__read_graph'));

        const api = await extensionApi();
        api.usePrompts(new ScriptedPrompts());
        await vscode.commands.executeCommand('agentCheckpoints.revokeMcpServers');
        api.usePrompts(undefined);
        fx.setScript([{ text: 'No memory tools.' }]);
        const third = new ScriptedPrompts(); // dismisses the question
        await runTask(third, 'and again');
        assert.ok(third.saw(allowPrompt), 'asked again after the revoke');
        assert.ok(!fx.state.requests[0]?.tools.includes('memory__read_graph'), 'not allowed: not started');
      } finally {
        await fs.rm(file, { force: true });
      }
    });
  });
}
