import { z } from 'zod';
import type { LedgerEntry } from '../ledger/schema';
import type { MessageParam } from '../model/messages';
import { PLAN_STEP_STATUSES } from '../../words/statuses';
import { planStepLines } from '../../words/plan-words';

// The model's plan: a short list of steps with their status, which it sets whole with the
// update_plan tool (core/tools/update-plan.ts). One fact in one place: the plan is the input of
// the run's latest update_plan call that succeeded in the active history. The fold takes it from
// that call's tool_use block when the call's `succeeded` entry is folded (so a branch, a restore
// and a fork, which fold the history up to their point, have the plan as it was there), and keeps
// it across a compaction (state snapshots carry it).

export const UPDATE_PLAN = 'update_plan';
export const MAX_PLAN_STEPS = 20;
const MAX_PLAN_STEP_CHARS = 200;

const PlanStep = z.strictObject({
  step: z
    .string()
    .min(1)
    .max(MAX_PLAN_STEP_CHARS)
    // One line, no control characters: a step is shown as one line everywhere.
    // eslint-disable-next-line no-control-regex -- control characters are what it refuses
    .regex(/^[^\u0000-\u001f\u007f]*\S[^\u0000-\u001f\u007f]*$/, 'one line of text, no control characters')
    .describe('What this step does, in one short line.'),
  status: z.enum(PLAN_STEP_STATUSES).describe('pending, in_progress (the step being worked on) or done.'),
});

export const Plan = z.strictObject({
  steps: z
    .array(PlanStep)
    .max(MAX_PLAN_STEPS)
    .describe(`The whole plan, in order (at most ${MAX_PLAN_STEPS} steps); an empty list clears it.`),
});
export type Plan = z.infer<typeof Plan>;

/** The plan a succeeded update_plan call set: its tool_use input in `messages` (searched from the end). */
export function planOfCall(messages: readonly MessageParam[], callId: string): Plan | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const { role, content } = messages[i]!;
    if (role !== 'assistant' || typeof content === 'string') continue;
    const use = content.find((b) => b.type === 'tool_use' && b.id === callId);
    if (use === undefined) continue;
    if (use.name !== UPDATE_PLAN) return undefined;
    const parsed = Plan.safeParse(use.input);
    return parsed.success ? parsed.data : undefined;
  }
  return undefined;
}

/** A ledger entry folded: a succeeded update_plan call sets the plan (a call whose input is not a plan leaves it). */
export function foldPlanCall(
  state: { plan?: Plan | undefined; readonly messages: readonly MessageParam[] },
  entry: Pick<LedgerEntry, 'callId' | 'toolName' | 'status'>,
): void {
  if (entry.toolName !== UPDATE_PLAN || entry.status !== 'succeeded') return;
  const plan = planOfCall(state.messages, entry.callId);
  if (plan !== undefined) state.plan = plan;
}

export const PLAN_NOTE_MARKER = '[current plan]';

/** The plan said again to the model (after a compaction), at the end of the conversation. */
export function planNote(plan: Plan): string {
  return [
    `${PLAN_NOTE_MARKER} The conversation was compacted. Your plan as you last set it with ${UPDATE_PLAN} ([x] done, [>] in progress, [ ] pending):`,
    ...planStepLines(plan.steps),
  ].join('\n');
}
