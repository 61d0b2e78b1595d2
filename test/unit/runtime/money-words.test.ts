import { strict as assert } from 'node:assert';
import { costLimitWarning, limitHit, usd } from '../../../src/core/runtime/budget';
import { describeRaise, raiseFor } from '../../../src/core/runtime/instruction';
import type { Budget } from '../../../src/core/store/records';
import { SETTINGS } from './harness';

// Costs in words: under a dollar with enough digits to differ from the limit, never "$0.00" for a
// cost that is not nothing.

const atCost = (costUsd: number, maxCostUsd: number): Budget => ({
  turns: 1,
  maxTurns: 50,
  inputTokens: 10,
  outputTokens: 5,
  tokensUsed: 15,
  costUsd,
  maxCostUsd,
});

describe('costs in words', () => {
  it('a cost limit under a cent reads apart from the cost', () => {
    assert.equal(limitHit(atCost(0.0004, 0.0001))?.reason, 'cost limit reached ($0.0004 of $0.0001)');
    assert.equal(limitHit(atCost(0.0012, 0.001))?.reason, 'cost limit reached ($0.0012 of $0.0010)');
    assert.equal(limitHit(atCost(2.5, 2))?.reason, 'cost limit reached ($2.50 of $2.00)');
    assert.equal(limitHit(atCost(1.000004, 1))?.reason, 'cost limit reached ($1.000004 of $1.000000)');
  });

  it('two digits from a dollar up, four under it, more for a tiny amount; nothing is $0.00', () => {
    assert.equal(usd(12), '$12.00');
    assert.equal(usd(0.5), '$0.5000');
    assert.equal(usd(0.00004), '$0.00004');
    assert.equal(usd(0), '$0.00');
    assert.equal(usd(0.001, 0.0004), '$0.0010');
  });

  it('a raise of a limit under a cent raises it, and says so in digits that differ', () => {
    const raise = raiseFor(atCost(0.0012, 0.001), 10);
    assert.deepEqual(raise?.raise, { maxCostUsd: 0.0015 });
    assert.equal(describeRaise(raise!.raised), 'cost limit raised by $0.0005 ($0.0010 -> $0.0015)');
    assert.equal(describeRaise({ kind: 'cost', from: 2, to: 3 }), 'cost limit raised by $1.00 ($2.00 -> $3.00)');
  });

  it('the warning of a cost limit a model cannot honour names it in the same words', () => {
    assert.match(costLimitWarning({ ...SETTINGS, maxCostUsd: 0.005 }, false) ?? '', /^the cost limit \(\$0\.0050\) cannot be enforced/);
  });
});
