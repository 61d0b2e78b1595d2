// A long run against the Messages API test double (prompt caching and token counting as the API
// does them, test/support/fake-anthropic/cache.ts): STEPS read_file calls with a context budget a
// tenth of the raw history, through the real SDK, the runtime and the memory store. Prints ONE
// JSON object: the raw history (every message ever written, in tokens), the largest request,
// the budget, the compactions, the share of input tokens read from the cache, and the cost with
// the cache and as the same tokens would cost without it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAnthropicProvider } from '../../src/core/model/anthropic';
import { priceOf } from '../../src/core/model/pricing';
import { silentLog } from '../../src/core/ports';
import { SUMMARY_REQUEST } from '../../src/core/runtime/compaction';
import { buildAgent } from '../../src/core/runtime/agent';
import { MemoryCheckpointStore } from '../support/memory-store';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { NodeWorkspace } from '../../src/host/node/node-workspace';
import { requestTokens } from '../support/fake-anthropic/cache';
import { rawHistoryTokens } from '../support/history-tokens';
import { startFakeAnthropic, type Responder } from '../support/fake-anthropic/server';

const STEPS = Number(process.env.LONGRUN_STEPS ?? 200);
const BUDGET = Number(process.env.LONGRUN_BUDGET ?? 12_000);
const MODEL = 'claude-sonnet-5-5';
const FILE = `${'z'.repeat(59)}\n`.repeat(40);

function script(): Responder {
  let step = 0;
  return (request) => {
    const last = (request.body as { messages: { content: unknown }[] }).messages.at(-1)?.content;
    if (Array.isArray(last) && (last.at(-1) as { text?: string } | undefined)?.text === SUMMARY_REQUEST)
      return { content: [{ type: 'text', text: `Summary: read a.txt ${step} times, it did not change.` }], stop_reason: 'end_turn' };
    step += 1;
    if (step > STEPS) return { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' };
    const call = { type: 'tool_use' as const, id: `t${step}`, name: 'read_file', input: { path: 'a.txt' } };
    return { content: [{ type: 'text', text: `Reading again (${step}).` }, call], stop_reason: 'tool_use' };
  };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'ac-longrun-'));
  writeFileSync(join(root, 'a.txt'), FILE);
  const fake = await startFakeAnthropic(script(), { promptCaching: true });
  const store = new MemoryCheckpointStore();
  try {
    const { runtime } = buildAgent({
      store,
      workspace: new NodeWorkspace({ roots: [root], storeDir: join(root, '.store') }),
      model: createAnthropicProvider({ apiKey: 'sk-bench', baseURL: fake.url, maxRetries: 0 }),
      approver: { approve: async () => 'deny', askUncertain: async () => null },
      commands: createNodeCommandRunner(),
      clock: { now: () => Date.now() },
      log: silentLog,
    });
    const settings = { model: MODEL, provider: 'anthropic', maxTurns: STEPS * 2, maxOutputTokensPerCall: 1024, maxContextTokens: BUDGET };
    const outcome = await runtime.start({ task: `read a.txt ${STEPS} times`, settings, system: 'You are a careful agent.' });
    if (outcome.status !== 'completed') throw new Error(`the run did not complete: ${outcome.status} ${outcome.reason ?? ''}`);
    const records = await store.readRecords(outcome.runId);
    const usages = records.flatMap((r) => (r.type === 'usage' ? [r] : []));
    const sum = (f: (u: (typeof usages)[number]) => number) => usages.reduce((n, u) => n + f(u), 0);
    const input = sum((u) => u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens);
    const price = priceOf(MODEL)!;
    const withoutCache = (input * price.inputPerMTok + sum((u) => u.outputTokens) * price.outputPerMTok) / 1e6;
    const result = {
      steps: records.filter((r) => r.type === 'checkpoint' && r.label === 'before_model').length,
      raw_history_tokens: rawHistoryTokens(records),
      max_request_tokens: Math.max(...fake.requests.map((r) => requestTokens(r.body))),
      context_budget: BUDGET,
      compactions: records.filter((r) => r.type === 'compaction').length,
      cache_read_share: Number((sum((u) => u.cacheReadInputTokens) / input).toFixed(4)),
      cost_usd: Number(sum((u) => u.costUsd).toFixed(6)),
      cost_usd_without_cache: Number(withoutCache.toFixed(6)),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
