import { strict as assert } from 'node:assert';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import type { RunView } from '../../../src/protocol/viewModel';
import { describeRow } from '../../../src/webview/rowContent';
import { flatten, forkDepths } from '../../../src/webview/tree';
import { sampleRun } from './fixtures';

// The run list names a fork by what made it, with the run it came from beside it.

function view(runId: string, extra: Partial<RunView['header']> = {}): RunView {
  const { state, live } = sampleRun(2, { runId });
  const built = buildRunView(state, live, false);
  return { ...built, header: { ...built.header, task: 'Fix the greeting bug\nmore words', ...extra } };
}

function runRowOf(runs: readonly RunView[], runId: string) {
  const row = flatten(runs, new Set()).find((r) => r.kind === 'run' && r.run.runId === runId)!;
  return describeRow(row, Date.now());
}

describe('timeline: fork titles', () => {
  it('a fork is "Fork at step N of <parent>" until its first instruction, then that instruction beside its parent', () => {
    const parent = view('p');
    const fresh = view('f', { parent: { runId: 'p', step: 4 } });
    assert.equal(runRowOf([parent, fresh], 'p').label, 'Fix the greeting bug');
    assert.equal(runRowOf([parent, fresh], 'f').label, 'Fork at step 4 of Fix the greeting bug');
    assert.equal(runRowOf([parent, fresh], 'f').description, '↳ fork at step 4');
    const named = view('f', { parent: { runId: 'p', step: 4 }, instruction: 'Use the Oxford comma' });
    const row = runRowOf([parent, named], 'f');
    assert.equal(row.label, 'Use the Oxford comma');
    assert.equal(row.description, '↳ fork at step 4 of Fix the greeting bug');
    assert.match(row.title, /^Use the Oxford comma\n/, 'the tooltip leads with the title');
    assert.match(row.title, /Fork of run p from the start of step 4: "Fix the greeting bug"/);
    const compare = row.actions.find((a) => a.id === 'compare');
    assert.equal(compare?.title, 'Compare with "Fix the greeting bug" (the run it was forked from)');
  });

  it("a fork whose parent is not listed still has a name, the parent's id in its tooltip", () => {
    const row = runRowOf([view('f', { parent: { runId: 'gone', step: 2 } })], 'f');
    assert.equal(row.label, 'Fork at step 2 of Fix the greeting bug');
    assert.match(row.title, /Fork of run gone from the start of step 2\n/);
    assert.equal(row.actions.find((a) => a.id === 'compare')?.title, 'Compare with run gone (the run it was forked from)');
  });
});

describe('timeline: forks indented under their parent', () => {
  it('a fork is one deeper than its listed parent, a fork of a fork two; an unlisted parent leaves it at the left', () => {
    const depths = forkDepths(
      [
        view('p'),
        view('f', { parent: { runId: 'p', step: 2 } }),
        view('ff', { parent: { runId: 'f', step: 1 } }),
        view('orphan', { parent: { runId: 'gone', step: 1 } }),
      ].map((v) => v.header),
    );
    assert.deepEqual(Object.fromEntries(depths), { p: 0, f: 1, ff: 2, orphan: 0 });
  });
});
