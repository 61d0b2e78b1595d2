import { strict as assert } from 'node:assert';
import { branchName, comparisonTitle, finderOf, runTitle, type TitledRun } from '../../../src/words/run-title';

const root: TitledRun = { runId: 'r1', task: 'Fix the greeting bug\nThe tests say "Hello, undefined".' };
const fresh: TitledRun = { runId: 'f1', task: root.task, parent: { runId: 'r1', step: 4 } };
const instructed: TitledRun = { ...fresh, runId: 'f2', instruction: 'Use the Oxford comma' };
const deeper: TitledRun = { runId: 'f3', task: root.task, parent: { runId: 'f2', step: 2 } };
const find = finderOf([root, fresh, instructed, deeper]);

describe('run titles: one name per run on every surface', () => {
  it('names a run by the first line of its task, and a fork by what made it', () => {
    assert.equal(runTitle(root, find), 'Fix the greeting bug');
    assert.equal(runTitle(fresh, find), 'Fork at step 4 of Fix the greeting bug', 'before its first new instruction');
    assert.equal(runTitle(instructed, find), 'Use the Oxford comma', 'then by that instruction');
    assert.equal(runTitle(deeper, find), 'Fork at step 2 of Use the Oxford comma', "a fork of a fork names its parent's title");
  });

  it('names a comparison by both branches, a fork marked as one', () => {
    assert.equal(comparisonTitle(root, instructed, find), 'Fix the greeting bug ↔ fork: Use the Oxford comma');
    assert.equal(branchName(fresh, find), 'Fork at step 4 of Fix the greeting bug');
  });

  it('stays short and finite whatever the listing holds', () => {
    const missing: TitledRun = { runId: 'f9', task: 'Tidy up', parent: { runId: 'gone', step: 3 } };
    assert.equal(
      runTitle(missing, () => undefined),
      'Fork at step 3 of Tidy up',
      'a parent not listed: the task it inherited',
    );
    const loop: TitledRun = { runId: 'a', task: 't', parent: { runId: 'a', step: 1 } };
    assert.match(runTitle(loop, finderOf([loop])), /^(Fork at step 1 of )+t$/, 'a parent loop ends');
    assert.equal(runTitle({ runId: 'x', task: 'word '.repeat(100) }, find).length, 100);
    assert.equal(runTitle({ runId: 'x', task: '  \n' }, find), 'run x');
  });
});
