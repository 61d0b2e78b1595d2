import { strict as assert } from 'node:assert';
import { planStatusWords, planSummary } from '../../../src/words/plan-words';

// The pinned plan's words: the step in progress is "now" while the run runs, and where the run was
// left once it stopped (completed, paused, interrupted): a finished run never says "now".

const steps = [
  { step: 'Read the code', status: 'done' as const },
  { step: 'Fix the parser', status: 'in_progress' as const },
  { step: 'Run the tests', status: 'pending' as const },
];

describe('the plan in words', () => {
  it('says "now" for a running run and "left at" for one that stopped', () => {
    assert.equal(planSummary(steps), '1 of 3 done; now: Fix the parser');
    assert.equal(planSummary(steps, true), '1 of 3 done; left at: Fix the parser');
    assert.equal(planSummary(steps.slice(0, 1), true), '1 of 1 done', 'no step in progress: nothing to say of one');
  });

  it('tells a screen reader the same of the step in progress, and the other steps as they are', () => {
    assert.equal(planStatusWords('in_progress', false), 'in progress');
    assert.equal(planStatusWords('in_progress', true), 'where the run was left');
    assert.equal(planStatusWords('pending', true), 'to do');
    assert.equal(planStatusWords('done', true), 'done');
  });
});
