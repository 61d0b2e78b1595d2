import { strict as assert } from 'node:assert';
import type { MessageParam } from '../../../src/core/model/messages';
import { limitBeforeAnyRequest, raiseTo } from '../../../src/core/runtime/budget';
import type { Budget } from '../../../src/core/store/records';
import type { ResumeState } from '../../../src/core/store/resume-state';
import { LIMIT_LEFT, raiseBeforeResume, type RaiseDeps } from '../../../src/host/vscode/run/raise-limit';

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

const AT_TURNS: Budget = { turns: 5, maxTurns: 5, inputTokens: 10, outputTokens: 5, tokensUsed: 15, costUsd: 0.0004, maxCostUsd: 1 };
const RESULTS: MessageParam[] = [
  { role: 'user', content: 'task' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'list_dir', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.txt' }] },
];

describe('a resume into the limit the run stopped at', () => {
  it('would stop again before any request: the limit, unless the raise lifts it', () => {
    assert.deepEqual(limitBeforeAnyRequest({ budget: AT_TURNS, messages: RESULTS })?.kind, 'turns');
    assert.equal(limitBeforeAnyRequest({ budget: AT_TURNS, messages: RESULTS }, { maxTurns: 6 }), undefined);
    assert.equal(limitBeforeAnyRequest({ budget: AT_TURNS, messages: RESULTS }, { maxTurns: 5 })?.kind, 'turns');
    const atCost = { ...AT_TURNS, maxTurns: 50, costUsd: 1.2 };
    assert.equal(limitBeforeAnyRequest({ budget: atCost, messages: RESULTS }, { maxTurns: 60 })?.kind, 'cost');
    assert.equal(limitBeforeAnyRequest({ budget: { ...AT_TURNS, maxTurns: 6 }, messages: RESULTS }), undefined);
  });

  it('has work to do when the history ends with an answer: its calls run first, or a final answer ends the run', () => {
    assert.equal(limitBeforeAnyRequest({ budget: AT_TURNS, messages: RESULTS.slice(0, 2) }), undefined);
    const final: MessageParam = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] };
    assert.equal(limitBeforeAnyRequest({ budget: AT_TURNS, messages: [...RESULTS, final] }), undefined);
  });
});

describe('the extension asks for the new limit before it resumes a run at its limit', () => {
  const deps = (budget: Budget, answer: string | undefined) => {
    const asked: string[] = [];
    const raiseDeps: RaiseDeps = {
      prompts: {
        inputBox: async (options) => {
          asked.push(`${options.title}: ${options.prompt} [${options.value}]`);
          return answer;
        },
      },
      store: { readResumeState: async () => ({ budget, messages: RESULTS }) as unknown as ResumeState },
      turnsPerRun: () => 50,
    };
    return { raiseDeps, asked };
  };

  it('asks "Raise to…" and resumes with the limit typed', async () => {
    const { raiseDeps, asked } = deps(AT_TURNS, '12');
    assert.deepEqual(await raiseBeforeResume(raiseDeps, 'r1'), { maxTurns: 12 });
    assert.deepEqual(asked, ['Raise the turns limit: The run stopped at 5 model calls. Go on up to: [55]']);
  });

  it('resumes nothing when the question is dismissed', async () => {
    const { raiseDeps } = deps(AT_TURNS, undefined);
    assert.equal(await raiseBeforeResume(raiseDeps, 'r1'), null);
    assert.match(LIMIT_LEFT, /not resumed/);
  });

  it('asks nothing of a run below its limits, or given a raise that lifts it', async () => {
    const below = deps({ ...AT_TURNS, maxTurns: 9 }, '99');
    assert.equal(await raiseBeforeResume(below.raiseDeps, 'r1'), undefined);
    const given = deps(AT_TURNS, '99');
    assert.deepEqual(await raiseBeforeResume(given.raiseDeps, 'r1', { maxTurns: 7 }), { maxTurns: 7 });
    assert.deepEqual([...below.asked, ...given.asked], []);
  });
});
