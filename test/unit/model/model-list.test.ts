import { strict as assert } from 'node:assert';
import { createModelLister, modelChoices } from '../../../src/core/model/model-list';
import { DEFAULT_MODEL } from '../../../src/core/model/models';
import { ModelError } from '../../../src/core/model/provider';
import { startFakeAnthropic, type FakeAnthropic } from '../../support/fake-anthropic/server';

const LISTED = [
  { id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', max_input_tokens: 200_000 },
  { id: 'claude-opus-5-5', display_name: 'Claude Opus 5.5', max_input_tokens: 1_000_000 },
  { id: DEFAULT_MODEL, display_name: 'Claude Sonnet 5.5', max_input_tokens: 1_000_000 },
  { id: 'claude-new-7', display_name: 'Claude New 7', max_input_tokens: 2_000_000 },
];

describe('model picker', () => {
  let fake: FakeAnthropic | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('lists every page of the Models API once, then answers from the cache until it is stale', async () => {
    fake = await startFakeAnthropic([], { models: LISTED });
    let now = 0;
    const lister = createModelLister({ apiKey: 'sk-test', baseURL: fake.url, ttlMs: 1000, now: () => now });
    const first = await lister.list();
    assert.deepEqual(
      first.map((m) => m.id),
      LISTED.map((m) => m.id),
    );
    await lister.list();
    assert.equal(fake.requests.length, 1, 'the second list came from the cache');
    now = 2000;
    await lister.list();
    assert.equal(fake.requests.length, 2);
    assert.equal(fake.requests[0]!.path, '/v1/models');
  });

  it('offers the default first, each with its window and prices, a deprecated model last with its replacement', () => {
    const choices = modelChoices(LISTED);
    assert.equal(choices[0]!.id, DEFAULT_MODEL);
    assert.match(choices[0]!.label, /\(default\)/);
    assert.equal(choices[0]!.description, '1M context · $2 / $10 per MTok');
    assert.equal(choices.at(-1)!.id, 'claude-sonnet-4-5');
    assert.match(choices.at(-1)!.detail, /use claude-sonnet-5-5 instead/);
    assert.match(choices.find((c) => c.id === 'claude-new-7')!.description, /2M context · price unknown/);
    assert.ok(
      modelChoices(undefined).every((c) => c.id.startsWith('claude-')),
      'without the API, the current models of the table',
    );
  });

  it('a failed listing is a ModelError without the key', async () => {
    const lister = createModelLister({ apiKey: 'sk-secret-key-123', baseURL: 'http://127.0.0.1:9', ttlMs: 1000 });
    await assert.rejects(lister.list(), (e: unknown) => e instanceof ModelError && !e.message.includes('sk-secret-key-123'));
  });
});
