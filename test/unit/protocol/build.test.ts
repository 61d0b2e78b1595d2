import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { isExternalEffect } from '../../../src/core/ledger/schema';
import { buildRunView, runDelta, summarizeInput } from '../../../src/host/vscode/timeline/view-build';
import { applyRunDelta } from '../../../src/protocol/messages';
import { foldRecords } from '../../../src/core/store/history';
import { compactedRun } from '../store/fixtures';
import { sampleRun } from '../webview/fixtures';

describe('protocol build: RunState to view model', () => {
  const { state, live } = sampleRun(26, { running: true });
  const view = buildRunView(state, live, true);

  it('has one row per step with its calls, in order', () => {
    assert.deepEqual(
      view.steps.map((s) => s.stepId),
      Array.from({ length: 27 }, (_, i) => i),
    );
    assert.equal(view.steps[0]!.calls.length, 0);
    assert.equal(view.steps[5]!.calls[0]!.callId, 'toolu_5');
    assert.equal(view.steps[5]!.checkpointId, state.checkpoints.find((c) => c.stepId === 5)!.checkpointId);
    assert.equal(view.steps[5]!.restorePoint, 'start of step 5');
    assert.equal(view.steps[5]!.label, 'tool_finished');
    assert.equal(view.steps[26]!.label, 'tool_started');
  });

  it('fills the header from the run, budget and lease', () => {
    assert.equal(view.header.runId, 'run-1');
    assert.equal(view.header.status, 'running');
    assert.equal(view.header.active, true);
    assert.equal(view.header.inputTokens, state.budget.inputTokens);
    assert.ok(view.header.updatedAt > view.header.createdAt);
  });

  it("carries the run's Instructions: the system prompt, its version, the project files with short hashes", () => {
    assert.equal(view.header.instructions, undefined, 'a run without a system prompt has none');
    const prompt = {
      version: 1,
      instructionNames: ['AGENTS.md'],
      instructionFiles: [{ path: 'AGENTS.md', hash: 'a'.repeat(64), bytes: 2048, truncated: false }],
      nestedInstructions: ['pkg/AGENTS.md'],
    };
    const withPrompt = buildRunView({ ...state, run: { ...state.run, system: 'x'.repeat(400), prompt } }, live, true);
    assert.deepEqual(withPrompt.header.instructions, {
      version: 1,
      tokens: 100,
      text: 'x'.repeat(400),
      files: [{ path: 'AGENTS.md', hash: 'a'.repeat(12), bytes: 2048, truncated: false }],
      nested: ['pkg/AGENTS.md'],
    });
  });

  it('summarises tool inputs and durations', () => {
    const call = view.steps[4]!.calls[0]!;
    assert.equal(call.input, 'src/module4.ts');
    assert.equal(call.durationMs, 800);
    assert.equal(view.steps[26]!.calls[0]!.status, 'started');
    assert.equal(view.steps[26]!.calls[0]!.durationMs, undefined);
    assert.equal(summarizeInput({ command: 'a\n  b' }), 'a b');
    assert.equal(summarizeInput({ n: 1 }), '{"n":1}');
    assert.equal(summarizeInput('x'.repeat(200)).length, 80);
  });

  it('flags external effects with their compensation, or not reversible', () => {
    const byTool = (name: string) => view.steps.flatMap((s) => s.calls).find((c) => c.toolName === name)!;
    assert.equal(byTool('read_file').effect, undefined);
    assert.equal(byTool('write_file').effect, undefined);
    assert.deepEqual(byTool('run_command').effect, { effects: ['process.spawn'], compensation: 'not reversible', reversible: false });
    assert.deepEqual(byTool('http_post').effect, {
      effects: ['network.post'],
      compensation: 'close the created issue by hand',
      reversible: true,
    });
    assert.equal(isExternalEffect('fs.write'), false);
    assert.equal(isExternalEffect('network'), true);
  });

  it('shows recorded patch states over live ones, and unknown when live is not known', () => {
    const patches = view.steps.flatMap((s) => s.calls.flatMap((c) => c.patches));
    const byId = new Map(patches.map((p) => [p.patchId, p.state]));
    assert.equal(byId.get('patch-9'), 'accepted');
    assert.equal(byId.get('patch-13'), 'rolled_back');
    assert.equal(byId.get('patch-5'), 'conflict');
    assert.equal(byId.get('patch-1'), 'applied');
    const withoutLive = buildRunView(state, new Map(), false);
    assert.equal(withoutLive.steps[1]!.calls[0]!.patches[0]!.state, 'unknown');
  });

  it('a delta is null when nothing changed and carries only the changed tail', () => {
    assert.equal(runDelta(view, buildRunView(state, live, true)), null);
    const longer = buildRunView(sampleRun(28, { running: true }).state, live, true);
    const delta = runDelta(view, longer)!;
    assert.equal(delta.fromStep, 26);
    assert.deepEqual(
      delta.steps.map((s) => s.stepId),
      [26, 27, 28],
    );
    assert.deepEqual(applyRunDelta(view, delta), longer);
  });

  it('applying the delta between any two views gives the second (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 }), fc.boolean(), (a, b, running) => {
        const prev = buildRunView(sampleRun(a, { running }).state, live, running);
        const next = buildRunView(sampleRun(b, { running: !running }).state, live, !running);
        const delta = runDelta(prev, next);
        assert.deepEqual(delta ? applyRunDelta(prev, delta) : prev, next);
      }),
      { numRuns: 60 },
    );
  });
});

describe('protocol build: a run whose history was compacted', () => {
  it("keeps each step's own words after a summary replaced the messages before it", () => {
    const view = buildRunView(foldRecords(compactedRun()), new Map(), false);
    assert.deepEqual(
      view.steps.map((s) => s.text),
      [undefined, 'First I read the README.', 'Then I fix the bug.', 'All done now.'],
    );
  });
});
