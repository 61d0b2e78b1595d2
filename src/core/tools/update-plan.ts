import { Plan, UPDATE_PLAN } from '../store/plan';
import { planCallWords, planSummary } from '../../words/plan-words';
import type { ToolDefinition } from './types';

// The model's plan, which the person sees pinned at the top of the run (Timeline) and in the CLI's
// output. The call changes no file and reaches nothing outside the run: it is recorded like every
// call, and the plan is read back from the call's input (core/store/plan.ts). Setting the same plan
// twice is setting it once: idempotent, replayed without asking.

export const updatePlanTool: ToolDefinition<Plan> = {
  name: UPDATE_PLAN,
  description:
    'Set your plan for the task: the whole list of steps, each with its status (pending, in_progress, done). The person sees it beside the run. Use it for a task of several steps: set it once you know the steps, and again whenever a step starts or ends (keep one step in_progress). It changes no file.',
  input: Plan,
  idempotency: 'idempotent',
  replayPolicy: 'auto',
  sideEffects: [],
  compensation: 'nothing to undo (it records the plan only)',
  summarize: planCallWords,
  execute(input) {
    const content = input.steps.length === 0 ? 'Plan cleared.' : `Plan updated: ${planSummary(input.steps)}.`;
    return Promise.resolve({ content });
  },
};
