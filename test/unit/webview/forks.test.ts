import { strict as assert } from 'node:assert';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { RequestMessage } from '../../../src/protocol/messages';
import type { RunView } from '../../../src/protocol/viewModel';
import { TimelineModel } from '../../../src/webview/model';
import { describeRow } from '../../../src/webview/rowContent';
import { flatten, rowKey } from '../../../src/webview/tree';
import { sampleRun } from './fixtures';

// The Timeline's forks: a "Fork from here" action on each step, and the run list as a tree.

function view(runId: string, createdAt: number, parent?: { runId: string; step: number }): RunView {
  const { state, live } = sampleRun(3, { runId });
  const built = buildRunView(state, live, false);
  return { ...built, header: { ...built.header, createdAt, ...(parent ? { parent } : {}) } };
}

describe('timeline: forks', () => {
  it('lists each run with its forks right after it, newest first at each level', () => {
    const model = new TimelineModel();
    model.replaceAll([
      view('a', 1),
      view('b', 5),
      view('a-fork-1', 2, { runId: 'a', step: 2 }),
      view('a-fork-2', 4, { runId: 'a', step: 1 }),
      view('fork-of-fork', 3, { runId: 'a-fork-1', step: 1 }),
      view('orphan', 6, { runId: 'gone', step: 1 }),
    ]);
    assert.deepEqual(
      model.list().map((r) => r.header.runId),
      ['orphan', 'b', 'a', 'a-fork-2', 'a-fork-1', 'fork-of-fork'],
    );
  });

  it('offers "Fork from the start of step N" on each step of a stopped run, and says which run a fork came from', () => {
    const fork = view('f', 2, { runId: 'p', step: 2 });
    const rows = flatten([fork], new Set([rowKey.run('f')]));
    const runRow = rows.find((r) => r.kind === 'run')!;
    assert.equal(describeRow(runRow, Date.now()).description, '↳ fork at step 2');
    assert.match(describeRow(runRow, Date.now()).title, /Fork of run p from the start of step 2/);
    const step = rows.find((r) => r.kind === 'step' && r.step?.stepId === 2)!;
    const actions = describeRow(step, Date.now()).actions.map((a) => [a.id, a.title]);
    assert.deepEqual(
      actions.find(([id]) => id === 'fork'),
      ['fork', 'Fork from the start of step 2'],
    );
  });

  it('the fork request is checked where it enters', () => {
    const ok = RequestMessage.safeParse({ type: 'request', requestId: 'q1', method: 'fork', params: { runId: 'r', step: 2 } });
    assert.equal(ok.success, true);
    for (const step of [0, -1, 1.5, '2'])
      assert.equal(
        RequestMessage.safeParse({ type: 'request', requestId: 'q2', method: 'fork', params: { runId: 'r', step } }).success,
        false,
      );
  });
});
