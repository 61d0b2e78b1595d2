import { PLAN_STEP_STATUSES } from './statuses';

// The plan the model keeps with update_plan, in the words every surface uses: the Timeline's
// pinned plan, the CLI's lines and the note that says it again to the model after a compaction.

type PlanStepStatus = (typeof PLAN_STEP_STATUSES)[number];

interface StepLike {
  readonly step: string;
  readonly status: PlanStepStatus;
}

/** A step's status as a person reads it. */
const PLAN_STATUS_WORDS: Record<PlanStepStatus, string> = { pending: 'to do', in_progress: 'in progress', done: 'done' };

/** "2 of 5 done" and the step in progress, when there is one: "now: …", or "left at: …" when the run is not running (`stopped`). */
export function planSummary(steps: readonly StepLike[], stopped = false): string {
  const done = steps.filter((s) => s.status === 'done').length;
  const now = steps.find((s) => s.status === 'in_progress');
  return `${done} of ${steps.length} done${now ? `; ${stopped ? 'left at' : 'now'}: ${now.step}` : ''}`;
}

/** A step's status in words; the step in progress of a run that is not running is where it was left. */
export const planStatusWords = (status: PlanStepStatus, stopped: boolean): string =>
  stopped && status === 'in_progress' ? 'where the run was left' : PLAN_STATUS_WORDS[status];

/** One line a step: "[x] text", "[>] text", "[ ] text". */
export function planStepLines(steps: readonly StepLike[]): string[] {
  const mark: Record<PlanStepStatus, string> = { done: '[x]', in_progress: '[>]', pending: '[ ]' };
  return steps.map((s) => `${mark[s.status]} ${s.step}`);
}

function isStep(value: unknown): value is StepLike {
  const step = value as Partial<StepLike> | null;
  return typeof step?.step === 'string' && (PLAN_STEP_STATUSES as readonly string[]).includes(step.status as string);
}

/** An update_plan call in one line, from its input as the model sent it: "plan: 1 of 3 done; now: …". */
export function planCallWords(input: unknown): string {
  const steps = (input as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps) || !steps.every(isStep)) return 'update_plan';
  return steps.length === 0 ? 'clear the plan' : `plan: ${planSummary(steps)}`;
}
