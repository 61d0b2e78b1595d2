// The search tools as the model sees them, for bench:search: a scripted run (the loopback Messages
// API double) whose answers call find_files then search_text on a tree, through the real runtime,
// file store and Node workspace. The figure of a call is the time from the model's answer (the
// provider's complete() resolving) to the next request (its next complete() call): everything the
// runtime does between, save points included.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAnthropicProvider } from '../../src/core/model/anthropic';
import type { ModelProvider } from '../../src/core/model/provider';
import { silentLog } from '../../src/core/ports';
import { buildAgent } from '../../src/core/runtime/agent';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { NodeWorkspace } from '../../src/host/node/node-workspace';
import { openFileStore } from '../../src/host/node/store-factory';
import { startFakeAnthropic, type ResponseStep } from '../support/fake-anthropic/server';

type Call = readonly [name: string, input: Record<string, unknown>];

const usage = { input_tokens: 100, output_tokens: 20 };

function callStep(id: string, call: Call): ResponseStep {
  return { content: [{ type: 'tool_use', id, name: call[0], input: call[1] }], stop_reason: 'tool_use', usage };
}

/** complete() wrapped: when each call began and when its answer came back. */
function timedModel(inner: ModelProvider): { model: ModelProvider; marks: { called: number; answered: number }[] } {
  const marks: { called: number; answered: number }[] = [];
  const model: ModelProvider = {
    name: inner.name,
    async complete(request, onEvent) {
      const called = performance.now();
      const response = await inner.complete(request, onEvent);
      marks.push({ called, answered: performance.now() });
      return response;
    },
  };
  return { model, marks };
}

/** One run that makes the calls one a step; for each call, ms from the answer that made it to the next request. */
export async function answerToRequestMs(root: string, rgPath: string | null, calls: readonly Call[]): Promise<number[]> {
  const storeDir = mkdtempSync(join(tmpdir(), 'search-bench-store-'));
  const steps = [
    ...calls.map((c, i) => callStep(`toolu_bench_${i}`, c)),
    { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn', usage },
  ];
  const fake = await startFakeAnthropic(steps as ResponseStep[]);
  try {
    const { model, marks } = timedModel(createAnthropicProvider({ apiKey: 'sk-bench', baseURL: fake.url, maxRetries: 0 }));
    const { runtime } = buildAgent({
      store: openFileStore(storeDir),
      workspace: new NodeWorkspace({ roots: [root], storeDir, ripgrep: rgPath }),
      model,
      approver: { approve: async () => 'allow_for_run', askUncertain: async () => null },
      commands: createNodeCommandRunner(),
      clock: { now: () => Date.now() },
      log: silentLog,
    });
    const outcome = await runtime.start({
      task: 'find the packages, then search',
      settings: { model: 'claude-sonnet-4-6', provider: 'anthropic', maxTurns: calls.length + 2, maxOutputTokensPerCall: 1024 },
    });
    if (outcome.status !== 'completed') throw new Error(`the scripted run ended ${outcome.status}`);
    return calls.map((_, i) => Math.round(marks[i + 1]!.called - marks[i]!.answered));
  } finally {
    await fake.close();
    rmSync(storeDir, { recursive: true, force: true });
  }
}
