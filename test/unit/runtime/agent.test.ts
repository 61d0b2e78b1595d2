import { strict as assert } from 'node:assert';
import { createAnthropicProvider } from '../../../src/core/model/anthropic';
import { silentLog } from '../../../src/core/ports';
import { buildAgent, runSettingsOf } from '../../../src/core/runtime/agent';
import type { RuntimeEvent } from '../../../src/core/runtime/types';
import { BUILTIN_TOOLS, type AnyTool } from '../../../src/core/tools/registry';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { answer, harness, SETTINGS, tempDir } from './harness';

// One way to build an agent: the CLI and the extension hand their ports to buildAgent and record
// the settings runSettingsOf makes of their choices.

describe('building an agent (core/runtime/agent.ts)', () => {
  it('runs a task with the ports it is given: the events go to the output, the tools are the built-in ones and the extra ones', async () => {
    const h = await harness({ script: [answer('done')] });
    try {
      const extra: AnyTool = { ...BUILTIN_TOOLS[0]!, name: 'extra_tool' };
      const events: RuntimeEvent[] = [];
      const { runtime, tools } = buildAgent({
        store: h.store,
        workspace: new NodeWorkspace({ roots: [h.root], storeDir: tempDir('agent-store') }),
        model: createAnthropicProvider({ apiKey: 'sk-test-key', baseURL: h.fake.url, maxRetries: 0 }),
        approver: h.approver,
        commands: h.commands,
        clock: { now: () => Date.now() },
        log: silentLog,
        git: { facts: async () => ({ isRepo: false, dirtyPaths: [] }) },
        extraTools: [extra],
        output: (event) => events.push(event),
      });
      assert.deepEqual(
        tools.list().map((t) => t.name),
        [...BUILTIN_TOOLS.filter((t) => t.needs !== 'git').map((t) => t.name), 'extra_tool'],
      );
      const outcome = await runtime.start({ task: 'say done', settings: SETTINGS, system: 'test' }, new AbortController().signal);
      assert.equal(outcome.status, 'completed');
      assert.ok(
        events.some((e) => e.type === 'checkpoint'),
        'the output heard the run',
      );
    } finally {
      await h.close();
    }
  });

  it('refuses an extra tool named like a built-in one', () => {
    assert.throws(
      () =>
        buildAgent({
          store: {} as never,
          workspace: {} as never,
          model: {} as never,
          approver: {} as never,
          commands: {} as never,
          clock: { now: () => 0 },
          log: silentLog,
          git: { facts: async () => ({ isRepo: false, dirtyPaths: [] }) },
          extraTools: [BUILTIN_TOOLS[0]!],
          output: () => undefined,
        }),
      /duplicate tool name/,
    );
  });

  it('records the same settings whichever host chose them: thinking off, adaptive or a budget; unset limits stay unset', () => {
    const base = { model: 'm', provider: 'anthropic', maxTurns: 5, maxOutputTokensPerCall: 1024 };
    assert.deepEqual(runSettingsOf({ ...base, thinking: 'off', maxTokens: undefined }), base);
    assert.deepEqual(runSettingsOf({ ...base, thinking: 'adaptive' }).thinking, { type: 'adaptive' });
    assert.deepEqual(runSettingsOf({ ...base, thinking: 2048, maxCostUsd: 1.5, maxContextTokens: 50_000 }), {
      ...base,
      maxCostUsd: 1.5,
      maxContextTokens: 50_000,
      thinking: { type: 'enabled', budgetTokens: 2048 },
    });
  });
});
