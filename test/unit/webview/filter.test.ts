import { strict as assert } from 'node:assert';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { filterRuns, isEmptyFilter, parseFilter } from '../../../src/webview/filter';
import { flatten, rowKey } from '../../../src/webview/tree';
import { sampleRun } from './fixtures';

const runA = buildRunView(sampleRun(60, { runId: 'a' }).state, sampleRun(60).live, false);
const runB = buildRunView(sampleRun(8, { runId: 'b', task: 'Rename the logger' }).state, new Map(), false);

describe('webview filter: parseFilter', () => {
  it('splits words from tool:, file:, status: terms, lower-cased, quotes keeping spaces', () => {
    const f = parseFilter('Retry tool:Read_File file:"src/my dir/a.ts" status:error is:changed budget');
    assert.deepEqual(f.words, ['retry', 'budget']);
    assert.deepEqual(f.tools, ['read_file']);
    assert.deepEqual(f.files, ['src/my dir/a.ts']);
    assert.deepEqual(f.statuses, ['failed', 'changed']);
  });

  it('keeps an unknown status as a word, and an empty query is no filter', () => {
    assert.deepEqual(parseFilter('status:bogus').words, ['status:bogus']);
    assert.equal(isEmptyFilter(parseFilter('   ')), true);
    assert.equal(isEmptyFilter(parseFilter('status:bogus')), false);
  });
});

describe('webview filter: filterRuns', () => {
  it('gives the runs as they are for an empty filter', () => {
    const result = filterRuns([runA, runB], parseFilter(''));
    assert.deepEqual(result.runs, [runA, runB]);
    assert.equal(result.steps, 70); // each run's step 0 too
    assert.equal(result.expand.size, 0);
  });

  it('finds the one step that touched a file in a 60-step run, and opens it', () => {
    // src/module13.ts: steps 13 and 53 (s % 40), both write_file (s % 4 === 1).
    const result = filterRuns([runA, runB], parseFilter('file:src/module13.ts'));
    assert.equal(result.runs.length, 1);
    const steps = result.runs[0]!.steps;
    assert.deepEqual(
      steps.map((s) => s.stepId),
      [13, 53],
    );
    assert.ok(steps.every((s) => s.calls.every((c) => c.input.includes('src/module13.ts'))));
    assert.ok(result.expand.has(rowKey.run('a')) && result.expand.has(rowKey.step('a', 13)));
    const rows = flatten(result.runs, result.expand);
    assert.deepEqual(
      rows.map((r) => r.kind),
      ['run', 'step', 'call', 'step', 'call'],
    );
  });

  it('filters by tool and status together (each term must hold), across runs', () => {
    const result = filterRuns([runA, runB], parseFilter('tool:http status:failed'));
    const calls = result.runs.flatMap((r) => r.steps.flatMap((s) => s.calls));
    assert.equal(result.runs.length, 2);
    assert.ok(calls.length > 0);
    assert.ok(calls.every((c) => c.toolName === 'http_post' && (c.isError || c.status === 'failed')));
    // write_file runs at s % 4 === 1, failures at s % 8 === 3: never both.
    assert.equal(filterRuns([runA, runB], parseFilter('tool:write status:failed')).runs.length, 0);
    assert.equal(result.steps, calls.length);
    const uncertain = filterRuns([runA], parseFilter('tool:write_file status:uncertain'));
    // Uncertain at s % 8 === 5: steps 5, 13, 21, ...
    assert.deepEqual(
      uncertain.runs[0]!.steps.map((s) => s.stepId),
      [5, 13, 21, 29, 37, 45, 53],
    );
  });

  it('matches words in a call result or the run task; a task match shows the run whole', () => {
    const byTask = filterRuns([runA, runB], parseFilter('logger'));
    assert.equal(byTask.runs.length, 1);
    assert.equal(byTask.runs[0], runB);
    const none = filterRuns([runA, runB], parseFilter('no such words anywhere'));
    assert.equal(none.runs.length, 0);
    assert.equal(none.steps, 0);
  });

  it('leaves the model untouched (narrowed steps are copies)', () => {
    const before = JSON.stringify(runA);
    filterRuns([runA], parseFilter('tool:read_file'));
    assert.equal(JSON.stringify(runA), before);
  });
});
