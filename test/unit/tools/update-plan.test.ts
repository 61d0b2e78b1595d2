import { strict as assert } from 'node:assert';
import type { MessageParam } from '../../../src/core/model/messages';
import { withPlanRestated } from '../../../src/core/runtime/compaction';
import { buildSystemPrompt } from '../../../src/core/runtime/system-prompt';
import { foldPlanCall, MAX_PLAN_STEPS, planNote, planOfCall, PLAN_NOTE_MARKER, type Plan } from '../../../src/core/store/plan';
import { createToolRegistry, describeInputError, toolSpec } from '../../../src/core/tools/registry';
import { updatePlanTool } from '../../../src/core/tools/update-plan';
import { describeCall } from '../../../src/words/words';

// The update_plan tool's input is the model's, so untrusted: checked whole, bounded in count and
// length, one line a step. Its plan is read back from the call (one fact in one place).

const PLAN: Plan = {
  steps: [
    { step: 'Read the parser', status: 'done' },
    { step: 'Fix the off-by-one', status: 'in_progress' },
    { step: 'Run the tests', status: 'pending' },
  ],
};

function refusal(input: unknown): string {
  const parsed = updatePlanTool.input.safeParse(input);
  assert.equal(parsed.success, false, `accepted ${JSON.stringify(input)}`);
  return describeInputError(updatePlanTool.name, parsed.error!);
}

describe('update_plan', () => {
  it('is offered to new runs, read-only and idempotent, and named in the system prompt', () => {
    const tool = createToolRegistry().get('update_plan');
    assert.ok(tool, 'the registry offers update_plan');
    assert.deepEqual([tool.idempotency, tool.replayPolicy, tool.sideEffects], ['idempotent', 'auto', []]);
    const schema = toolSpec(tool).input_schema as { required?: string[]; additionalProperties?: boolean };
    assert.deepEqual(schema.required, ['steps']);
    assert.equal(schema.additionalProperties, false);
    const prompt = buildSystemPrompt({ host: { os: 'Linux', shell: '/bin/sh' }, folders: ['/w'], startedAt: 0, tools: ['update_plan'] });
    assert.match(prompt, /^- update_plan sets your plan \(at most 20 steps/m);
  });

  it('accepts a plan, answers with its progress, and an empty list clears it', async () => {
    const ctx = {} as never;
    assert.equal((await updatePlanTool.execute(PLAN, ctx, [])).content, 'Plan updated: 1 of 3 done; now: Fix the off-by-one.');
    assert.equal(updatePlanTool.summarize(PLAN), 'plan: 1 of 3 done; now: Fix the off-by-one');
    assert.equal((await updatePlanTool.execute({ steps: [] }, ctx, [])).content, 'Plan cleared.');
    // The Timeline's call line, from the input as the model sent it (checked or not).
    const call = { toolName: 'update_plan', added: 0, removed: 0, hasPatches: false, denied: false };
    assert.equal(describeCall({ ...call, input: PLAN }), 'plan: 1 of 3 done; now: Fix the off-by-one');
    assert.equal(describeCall({ ...call, input: { steps: [] } }), 'clear the plan');
    assert.equal(describeCall({ ...call, input: { steps: [{ step: 'a', status: 'started' }] } }), 'update_plan');
    assert.equal(describeCall({ ...call, input: null, denied: true }), 'update_plan (denied)');
  });

  it('refuses what is not a short plan: unknown status, extra fields, too many or too long steps, several lines, blank steps', () => {
    assert.match(refusal({ steps: [{ step: 'a', status: 'started' }] }), /invalid input for update_plan/);
    assert.match(refusal({ steps: [{ step: 'a', status: 'done', owner: 'me' }] }), /owner/);
    assert.match(refusal({ steps: [], extra: 1 }), /extra/);
    assert.match(refusal({ steps: Array.from({ length: MAX_PLAN_STEPS + 1 }, () => ({ step: 'a', status: 'pending' })) }), /steps/);
    refusal({ steps: [{ step: 'x'.repeat(201), status: 'pending' }] });
    assert.match(refusal({ steps: [{ step: 'first\nsecond', status: 'pending' }] }), /one line/);
    refusal({ steps: [{ step: '   ', status: 'pending' }] });
    refusal({ steps: [{ step: '', status: 'pending' }] });
    refusal({ steps: 'do it all' });
    refusal(undefined);
    assert.ok(updatePlanTool.input.safeParse({ steps: [{ step: 'x'.repeat(200), status: 'pending' }] }).success);
  });

  it("the plan is a succeeded call's input; a failed call, another tool or an input that is not a plan leaves it", () => {
    const messages: MessageParam[] = [
      { role: 'user', content: 'task' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'p1', name: 'update_plan', input: PLAN },
          { type: 'tool_use', id: 'p2', name: 'update_plan', input: { steps: 'nope' } },
          { type: 'tool_use', id: 'r1', name: 'read_file', input: { path: 'a' } },
        ],
      },
    ];
    assert.deepEqual(planOfCall(messages, 'p1'), PLAN);
    const state: { plan?: Plan; messages: MessageParam[] } = { messages };
    foldPlanCall(state, { callId: 'p1', toolName: 'update_plan', status: 'started' });
    assert.equal(state.plan, undefined, 'a call that has not succeeded sets nothing');
    foldPlanCall(state, { callId: 'p1', toolName: 'update_plan', status: 'succeeded' });
    assert.deepEqual(state.plan, PLAN);
    foldPlanCall(state, { callId: 'p2', toolName: 'update_plan', status: 'succeeded' });
    foldPlanCall(state, { callId: 'r1', toolName: 'read_file', status: 'succeeded' });
    foldPlanCall(state, { callId: 'gone', toolName: 'update_plan', status: 'succeeded' });
    assert.deepEqual(state.plan, PLAN);
  });

  describe('said again after a compaction', () => {
    const before: MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'task' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'a' } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'alpha' },
          { type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: 'beta' }] },
        ],
      },
    ];

    it('is appended inside the last tool_result: every byte before it is unchanged', () => {
      const snapshot = JSON.stringify(before);
      const after = withPlanRestated(before, PLAN);
      assert.equal(JSON.stringify(before), snapshot, 'the input is not changed in place');
      assert.equal(after.length, before.length);
      assert.equal(JSON.stringify(after.slice(0, -1)), JSON.stringify(before.slice(0, -1)));
      const last = after.at(-1)!.content as { type: string; content?: { type: string; text: string }[] }[];
      assert.deepEqual(last[0], (before.at(-1)!.content as unknown[])[0]);
      assert.deepEqual(last[1]!.content!.slice(0, -1), [{ type: 'text', text: 'beta' }]);
      const note = last[1]!.content!.at(-1)!.text;
      assert.equal(note, planNote(PLAN));
      assert.ok(note.startsWith(PLAN_NOTE_MARKER));
      assert.match(note, /\n\[x\] Read the parser\n\[>\] Fix the off-by-one\n\[ \] Run the tests$/);
      // Serialised, the history before (up to the closing brackets of its last result) is a prefix of the one after.
      assert.ok(snapshot.endsWith('"beta"}]}]}]'));
      assert.ok(JSON.stringify(after).startsWith(snapshot.slice(0, -']}]}]'.length)), 'the note comes last');
    });

    it('after a person’s words it is a text block of its own at the end; no plan, an empty plan or an assistant turn last: nothing', () => {
      const instruction: MessageParam[] = [...before.slice(0, 2), { role: 'user', content: 'go on' }];
      const after = withPlanRestated(instruction, PLAN);
      assert.deepEqual(after.at(-1)!.content, [
        { type: 'text', text: 'go on' },
        { type: 'text', text: planNote(PLAN) },
      ]);
      assert.deepEqual(withPlanRestated(before, undefined), before);
      assert.deepEqual(withPlanRestated(before, { steps: [] }), before);
      assert.deepEqual(withPlanRestated(before.slice(0, 2), PLAN), before.slice(0, 2));
    });
  });
});
