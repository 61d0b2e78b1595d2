import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_MODEL, deprecationWarning, knownModels, modelFacts } from '../../../src/core/model/models';
import { DEFAULT_MAX_TURNS } from '../../../src/core/runtime/budget';

const sdkRoot = dirname(require.resolve('@anthropic-ai/sdk'));
const repoRoot = join(__dirname, '..', '..', '..');

/** The SDK's own list of deprecated models (not exported, so read from its file). */
function sdkDeprecated(): Record<string, string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const data = require(join(sdkRoot, 'internal', 'data', 'deprecated-models.js')) as { DEPRECATED_MODELS: Record<string, string> };
  return data.DEPRECATED_MODELS;
}

/** The model ids the SDK's `Model` type lists. */
function sdkModelIds(): string[] {
  const types = readFileSync(join(sdkRoot, 'resources', 'messages', 'messages.d.ts'), 'utf8');
  const line = /export type Model = ([^;]+);/.exec(types)?.[1] ?? '';
  return [...line.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

function packageSetting(name: string): Record<string, unknown> {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, Record<string, unknown>> } };
  };
  return pkg.contributes.configuration.properties[`agentCheckpoints.${name}`]!;
}

describe('model table', () => {
  it('defaults to a current model that the SDK lists and does not deprecate', () => {
    const deprecated = sdkDeprecated();
    assert.ok(Object.keys(deprecated).length > 0, 'the SDK list was read');
    assert.ok(!(DEFAULT_MODEL in deprecated), `${DEFAULT_MODEL} is deprecated by the SDK`);
    assert.ok(sdkModelIds().includes(DEFAULT_MODEL), `${DEFAULT_MODEL} is not an SDK model id`);
    assert.equal(modelFacts(DEFAULT_MODEL)?.current, true);
  });

  it('marks every model the SDK deprecates, with a current replacement, and never offers one as current', () => {
    for (const id of Object.keys(sdkDeprecated())) {
      const warning = deprecationWarning(id);
      assert.ok(warning, `no warning for ${id}`);
      const replacement = /use (\S+) instead/.exec(warning)?.[1];
      assert.equal(modelFacts(replacement!)?.current, true, `${id} -> ${replacement} is not current`);
      assert.notEqual(modelFacts(id)?.current, true, `${id} is offered as current`);
    }
    assert.equal(deprecationWarning(DEFAULT_MODEL), undefined);
  });

  it('names a source for every context window and price', () => {
    for (const model of knownModels()) {
      assert.ok(model.contextWindow > 0 && model.contextWindowSource.length > 10, model.id);
      assert.ok(model.priceSource.length > 10, model.id);
    }
    assert.equal(modelFacts('claude-sonnet-5-5-20260101')?.id, 'claude-sonnet-5-5');
    assert.equal(modelFacts('claude-opus-4-9'), undefined);
  });

  it('the model setting lists the current models with descriptions, and the default turns agree', () => {
    const model = packageSetting('model');
    const current = knownModels().filter((m) => m.current);
    assert.deepEqual(
      model['enum'],
      current.map((m) => m.id),
    );
    assert.deepEqual(
      model['enumDescriptions'],
      current.map((m) => m.description),
    );
    assert.equal(model['default'], DEFAULT_MODEL);
    assert.equal(packageSetting('maxTurns')['default'], DEFAULT_MAX_TURNS);
  });
});
