import { strict as assert } from 'node:assert';
import { raiseTo } from '../../../src/core/runtime/budget';

describe('"Raise to ...": the limit a person types', () => {
  it('gives the raise of the limit the run stopped at', () => {
    assert.deepEqual(raiseTo({ kind: 'turns', max: 20 }, '35'), { maxTurns: 35 });
    assert.deepEqual(raiseTo({ kind: 'tokens', max: 10_000 }, ' 50000 '), { maxTokens: 50_000 });
    assert.deepEqual(raiseTo({ kind: 'cost', max: 1 }, '$2.50'), { maxCostUsd: 2.5 });
  });

  it('says what is wrong with anything else', () => {
    assert.equal(raiseTo({ kind: 'turns', max: 20 }, '20'), 'more than the limit reached (20), please');
    assert.equal(raiseTo({ kind: 'turns', max: 20 }, '25.5'), 'a whole number, please');
    assert.equal(raiseTo({ kind: 'cost', max: 1 }, 'lots'), 'an amount in US dollars, please');
    assert.equal(raiseTo({ kind: 'tokens', max: 1 }, ''), 'a whole number, please');
  });
});
