import { strict as assert } from 'node:assert';
import { SUMMARY_REQUEST } from '../../../src/core/runtime/compaction';
import { buildRequest } from '../../../src/core/runtime/request';
import type { RunSession } from '../../../src/core/runtime/session';
import { RunRecord, type StoredRecord } from '../../../src/core/store/records';
import { BUILTIN_TOOLS, createToolRegistry } from '../../../src/core/tools/registry';
import { createRunOutput } from '../../../src/host/cli/output';
import { createAnthropicProvider } from '../../../src/core/model/anthropic';
import type { RecordedRequest, Responder } from '../../support/fake-anthropic/server';
import { assertEveryRequestValid } from '../../support/valid-requests';
import { answer, harness, recoveryNoteOf, reply, SETTINGS, toolUse, type Harness } from './harness';

// Runs on the default model (Claude Sonnet 5.5) against the fake in that model's shape: signed
// thinking blocks, the words between tool calls inside them, and the prefix check as a request
// rule (test/support/fake-anthropic/preserved-thinking.ts). A run stays append-only toward the
// model: no request is refused, through compactions, resumes and instructions.

const DEFAULT_MODEL_SETTINGS = { ...SETTINGS, model: 'claude-sonnet-5-5' };

function isSummaryRequest(request: RecordedRequest): boolean {
  const messages = (request.body as { messages: { content: unknown }[] }).messages;
  return JSON.stringify(messages.at(-1)?.content ?? '').includes(SUMMARY_REQUEST.slice(0, 40));
}

/** `steps` read_file calls, each said in words first, then an answer; summary requests get a summary. */
export function wordsScript(steps: number): Responder {
  let step = 0;
  return (request) => {
    if (isSummaryRequest(request)) return answer(`Summary: read a.txt ${step} times.`);
    step += 1;
    if (step > steps) return answer('All done.');
    return reply([{ type: 'text', text: `Reading a.txt again (${step}).` }, toolUse(`t${step}`, 'read_file', { path: 'a.txt' })]);
  };
}

const FILE = `${'x'.repeat(59)}\n`.repeat(70);

describe('runs on the default model stay append-only (preserved thinking)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a 200-step run with 20+ compactions of both kinds gets no refused request, and the words before every call stream', async function () {
    this.timeout(120_000);
    h = await harness({ files: { 'a.txt': FILE }, script: wordsScript(200), fake: { promptCaching: true, defaultModelShape: true } });
    const settings = { ...DEFAULT_MODEL_SETTINGS, maxTurns: 400, maxContextTokens: 20_000, thinking: { type: 'adaptive' as const } };
    const outcome = await h.runtime().start({ task: 'read a.txt 200 times', settings });
    assert.deepEqual(
      h.fake.refused.map((r) => `${r.index}: ${r.message}`),
      [],
    );
    assert.equal(outcome.status, 'completed', outcome.reason);
    assertEveryRequestValid(h.fake);
    const records = await h.records(outcome.runId);
    const compactions = records.filter((r): r is Extract<StoredRecord, { type: 'compaction' }> => r.type === 'compaction');
    assert.ok(compactions.length >= 20, `compactions: ${compactions.length}`);
    assert.deepEqual([...new Set(compactions.map((c) => c.kind))].sort(), ['cleared_tool_results', 'summary']);
    const words = h.events.flatMap((e) => (e.type === 'model' && e.event.type === 'thinking' ? [e.event.text] : [])).join('');
    const missing = Array.from({ length: 200 }, (_, i) => i + 1).filter((n) => !words.includes(`Reading a.txt again (${n}).\n`));
    assert.deepEqual(missing, [], 'the words before every tool call were streamed');
  });

  it('a run stopped mid-way resumes (recovery note) and takes a new instruction with no refused request', async () => {
    h = await harness({ files: { 'a.txt': FILE }, script: wordsScript(12), fake: { promptCaching: true, defaultModelShape: true } });
    const settings = { ...DEFAULT_MODEL_SETTINGS, maxTurns: 200, maxContextTokens: 8_000 };
    const runtime = h.runtime();
    const controller = new AbortController();
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'after_model' && e.checkpoint.stepId === 6) controller.abort();
    });
    const paused = await runtime.start({ task: 'read a.txt', settings }, controller.signal);
    assert.equal(paused.status, 'paused');
    const done = await h.runtime().resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    const next = await h.runtime().continue(done.runId, 'Now say what you found.', new AbortController().signal, { moreTurns: 5 });
    assert.equal(next.status, 'completed', next.reason);
    assert.deepEqual(
      h.fake.refused.map((r) => `${r.index}: ${r.message}`),
      [],
    );
    assertEveryRequestValid(h.fake);
  });

  it("sends the tool list recorded at the run's start for its whole life, whatever version resumes it", async () => {
    h = await harness({ files: { 'a.txt': FILE }, script: wordsScript(8), fake: { defaultModelShape: true } });
    const controller = new AbortController();
    const runtime = h.runtime();
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'after_model' && e.checkpoint.stepId === 4) controller.abort();
    });
    const paused = await runtime.start({ task: 'read a.txt', settings: { ...DEFAULT_MODEL_SETTINGS, maxTurns: 50 } }, controller.signal);
    assert.equal(paused.status, 'paused');
    // A later version of the product: a tool's description reworded, a new tool.
    const upgraded = BUILTIN_TOOLS.map((t) => (t.name === 'read_file' ? { ...t, description: `${t.description} (reworded)` } : t));
    const kept = upgraded.filter((t) => t.name !== 'delete_file');
    const tools = createToolRegistry({ tools: [...kept, { ...BUILTIN_TOOLS[0]!, name: 'read_file_v2' }] });
    const sentBefore = h.fake.requests.length;
    const done = await h.runtime({ tools }).resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    assert.deepEqual(
      h.fake.refused.map((r) => r.message),
      [],
    );
    const sent = h.fake.requests.map((r) =>
      JSON.stringify((r.body as { tools: { cache_control?: unknown }[] }).tools.map(({ cache_control: _c, ...t }) => t)),
    );
    assert.equal(new Set(sent).size, 1, 'every request sent the same tools');
    // The change is said at the end, in the resume's note.
    const note = recoveryNoteOf(h.fake, sentBefore) ?? '';
    assert.match(note, /no longer available \(a call to one returns an error\): delete_file/);
    assert.match(note, /new, not offered in this run: read_file_v2/);
    assert.equal((await h.store.readRun(paused.runId)).run.tools?.length, createToolRegistry().specs().length);
  });

  it("a run recorded without a tool list (an older version) still opens and sends the registry's tools", () => {
    const old = {
      v: 1,
      at: 1,
      type: 'run',
      runId: 'r1',
      task: 't',
      createdAt: 1,
      workspaceFolders: [],
      git: { isRepo: false, dirtyPaths: [] },
      settings: DEFAULT_MODEL_SETTINGS,
    };
    const parsed = RunRecord.safeParse(old);
    assert.ok(parsed.success, parsed.error?.message);
    const { v: _v, at: _at, type: _type, ...run } = parsed.data;
    const registry = createToolRegistry();
    const request = buildRequest({ run } as unknown as RunSession, registry, [{ role: 'user', content: 't' }], undefined);
    assert.deepEqual(request.tools, registry.specs());
  });

  for (const thinking of [undefined, { type: 'adaptive' as const }]) {
    it(`the words between tool calls stream as thinking to the CLI (thinking ${thinking?.type ?? 'off'})`, async () => {
      h = await harness({ files: { 'a.txt': 'A' }, script: wordsScript(3), fake: { defaultModelShape: true } });
      const settings = { ...DEFAULT_MODEL_SETTINGS, ...(thinking ? { thinking } : {}) };
      const outcome = await h.runtime().start({ task: 'read a.txt', settings });
      assert.equal(outcome.status, 'completed', outcome.reason);
      assert.deepEqual(h.fake.refused, []);
      const words = h.events.flatMap((e) => (e.type === 'model' && e.event.type === 'thinking' ? [e.event.text] : [])).join('');
      for (const n of [1, 2, 3]) assert.ok(words.includes(`Reading a.txt again (${n}).\n`), `the words of step ${n}: ${words}`);
      let out = '';
      const text = createRunOutput('text', { out: (t) => void (out += t), err: () => undefined }, createToolRegistry());
      let json = '';
      const lines = createRunOutput('json', { out: (t) => void (json += t), err: () => undefined }, createToolRegistry());
      for (const event of h.events) {
        text.event(event);
        lines.event(event);
      }
      assert.match(out, /Reading a\.txt again \(1\)\.\n[^]*Reading a\.txt again \(3\)\.\n[^]*All done\./);
      const streamed = json
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { type: string; text?: string })
        .filter((e) => e.type === 'thinking')
        .map((e) => e.text)
        .join('');
      assert.ok(streamed.includes('Reading a.txt again (2).'), streamed);
    });
  }

  it("a resume under another account's key (a teammate, a worker) is not refused, and the thinking left out is said", async () => {
    h = await harness({ files: { 'a.txt': FILE }, script: wordsScript(8), fake: { defaultModelShape: true } });
    const controller = new AbortController();
    const runtime = h.runtime();
    runtime.onEvent((e) => {
      if (e.type === 'checkpoint' && e.checkpoint.label === 'after_model' && e.checkpoint.stepId === 4) controller.abort();
    });
    const settings = { ...DEFAULT_MODEL_SETTINGS, maxTurns: 50, thinking: { type: 'adaptive' as const } };
    const paused = await runtime.start({ task: 'read a.txt', settings }, controller.signal);
    assert.equal(paused.status, 'paused');
    const teammate = createAnthropicProvider({ apiKey: 'sk-teammate-key', baseURL: h.fake.url, maxRetries: 3, streamRetryDelayMs: 5 });
    const done = await h.runtime({ model: teammate }).resume(paused.runId);
    assert.equal(done.status, 'completed', done.reason);
    assert.deepEqual(h.fake.refused, []);
    assertEveryRequestValid(h.fake);
    const notes = (await h.records(paused.runId)).flatMap((r) => (r.type === 'note' ? [r.text] : []));
    const said = notes.filter((text) => text.startsWith('The API left out'));
    assert.equal(said.length, 1, notes.join('\n'));
    assert.match(said[0]!, /thinking blocks? of earlier turns \(written under another account's key\)/);
  });
});
