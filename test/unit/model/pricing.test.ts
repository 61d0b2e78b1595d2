import { strict as assert } from 'node:assert';
import { costOf, priceOf } from '../../../src/core/model/pricing';

describe('pricing', () => {
  it('prices a known model from input, output and cache tokens', () => {
    const cost = costOf('claude-sonnet-4-5', {
      inputTokens: 1_000_000,
      outputTokens: 100_000,
      cacheReadInputTokens: 1_000_000,
      cacheCreationInputTokens: 100_000,
    });
    assert.equal(cost.priced, true);
    // 3 + 1.5 + 0.30 + 0.375
    assert.ok(Math.abs(cost.usd - 5.175) < 1e-9, String(cost.usd));
  });

  it('accepts dated snapshots and -latest of a listed id', () => {
    assert.deepEqual(priceOf('claude-sonnet-4-5-20250929'), priceOf('claude-sonnet-4-5'));
    assert.deepEqual(priceOf('claude-3-5-haiku-latest'), priceOf('claude-3-5-haiku'));
    assert.equal(priceOf('claude-opus-4-5')?.inputPerMTok, 5);
    assert.equal(priceOf('claude-opus-4')?.inputPerMTok, 15);
  });

  it('does not price an unlisted version as an older one', () => {
    assert.equal(priceOf('claude-opus-4-9'), undefined);
    assert.deepEqual(costOf('claude-opus-4-9', { inputTokens: 1000, outputTokens: 1000 }), { usd: 0, priced: false });
    assert.deepEqual(costOf('', { inputTokens: 1000, outputTokens: 1000 }), { usd: 0, priced: false });
  });

  it('costs nothing for no tokens', () => {
    assert.deepEqual(costOf('claude-haiku-4-5', { inputTokens: 0, outputTokens: 0 }), { usd: 0, priced: true });
  });
});
