// What `run` and `resume` print while a run goes. Text (the default): the model's words as they
// stream, then each call as one line when it ends (status and what it did). --json: one JSON
// event per line instead (CliEvent, for scripts). --quiet: nothing but the outcome. Warnings and
// errors go to stderr in every mode.
import { z } from 'zod';
import { LedgerStatus } from '../../core/ledger/schema';
import { toolUsesOf, type MessageParam } from '../../core/model/messages';
import type { RunOutcome, RuntimeEvent } from '../../core/runtime/types';
import { describeFailure, failureLine, type FailureAction } from '../../words/failure-words';
import { CheckpointLabel, RunFailure, RunStatus } from '../../core/store/records';
import { describeCall } from '../../core/tools/describe';
import { Plan, UPDATE_PLAN } from '../../core/store/plan';
import { planStepLines, planSummary } from '../../words/plan-words';
import type { ToolRegistry } from '../../core/tools/registry';

export type OutputMode = 'text' | 'json' | 'quiet';

const runId = z.string();

/** One line of `--json` output. */
export const CliEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), runId, text: z.string() }),
  /** The model's thinking text as it streams: the words it writes between tool calls on the newest models. */
  z.object({ type: z.literal('thinking'), runId, text: z.string() }),
  z.object({ type: z.literal('checkpoint'), runId, stepId: z.number(), label: CheckpointLabel }),
  z.object({
    type: z.literal('call'),
    runId,
    callId: z.string(),
    tool: z.string(),
    status: LedgerStatus,
    summary: z.string(),
    reason: z.string().optional(),
    error: z.string().optional(),
  }),
  /** The model's plan (update_plan), each time it changes. */
  z.object({ type: z.literal('plan'), runId, steps: Plan.shape.steps }),
  z.object({ type: z.literal('retry'), runId, attempt: z.number(), error: z.string() }),
  z.object({ type: z.literal('status'), runId, status: RunStatus, reason: z.string().optional() }),
  z.object({ type: z.literal('torn_tail_cut'), runId, message: z.string() }),
  z.object({
    type: z.literal('outcome'),
    runId,
    status: z.enum(['completed', 'failed', 'paused', 'cancelled']),
    reason: z.string().optional(),
    limit: z.object({ kind: z.enum(['turns', 'tokens', 'cost']), max: z.number() }).optional(),
    failure: RunFailure.optional(),
    /** The failure in words (words/failure-words), as the editor says it. */
    failureText: z.string().optional(),
  }),
]);
export type CliEvent = z.infer<typeof CliEvent>;

export interface Sink {
  out(text: string): void;
  err(text: string): void;
}

export interface RunOutput {
  event(event: RuntimeEvent): void;
  outcome(outcome: RunOutcome): void;
}

const ENDED = new Set(['succeeded', 'failed', 'uncertain']);
const MARK: Record<string, string> = { succeeded: 'ok', failed: 'failed', uncertain: 'status unknown' };

/** Each call's summary, from the assistant messages that asked for the calls; and the plan, from the latest update_plan call. */
class Summaries {
  private readonly byCall = new Map<string, string>();
  /** The input of each update_plan call. */
  private readonly plans = new Map<string, unknown>();
  private lastPlan: string | undefined;
  constructor(
    private readonly tools: ToolRegistry,
    history: readonly MessageParam[],
  ) {
    this.note(history);
  }

  note(messages: readonly MessageParam[]): void {
    for (const m of messages)
      if (m.role === 'assistant') {
        for (const use of toolUsesOf(m)) {
          this.byCall.set(use.id, describeCall(this.tools, use.name, use.input));
          if (use.name === UPDATE_PLAN) this.plans.set(use.id, use.input);
        }
      }
  }

  /** The plan a finished call set, when it is an update_plan call that changed the plan printed last. */
  changedPlan(e: Extract<CliEvent, { type: 'call' }>): Plan | undefined {
    if (e.status !== 'succeeded') return undefined;
    const parsed = this.plans.has(e.callId) ? Plan.safeParse(this.plans.get(e.callId)) : undefined;
    const plan = parsed?.success ? parsed.data : undefined;
    const key = plan && JSON.stringify(plan);
    if (key === undefined || key === this.lastPlan) return undefined;
    this.lastPlan = key;
    return plan;
  }

  of(callId: string, toolName: string): string {
    return this.byCall.get(callId) ?? toolName;
  }
}

/** The events worth a JSON line. */
function toCliEvent(event: RuntimeEvent, summaries: Summaries): CliEvent | undefined {
  const run = event.runId;
  switch (event.type) {
    case 'records':
      summaries.note(event.records.flatMap((r) => (r.type === 'message' ? [r.message] : [])));
      return undefined;
    case 'checkpoint':
      return { type: 'checkpoint', runId: run, stepId: event.checkpoint.stepId, label: event.checkpoint.label };
    case 'ledger': {
      const e = event.entry;
      const summary = summaries.of(e.callId, e.toolName);
      return {
        type: 'call',
        runId: run,
        callId: e.callId,
        tool: e.toolName,
        status: e.status,
        summary,
        ...(e.reason ? { reason: e.reason } : {}),
        ...(e.error ? { error: e.error } : {}),
      };
    }
    case 'model':
      if (event.event.type === 'text') return { type: 'text', runId: run, text: event.event.text };
      if (event.event.type === 'thinking') return { type: 'thinking', runId: run, text: event.event.text };
      if (event.event.type === 'retry') return { type: 'retry', runId: run, attempt: event.event.attempt, error: event.event.error };
      return undefined;
    case 'status':
      return { type: 'status', runId: run, status: event.status, ...(event.reason ? { reason: event.reason } : {}) };
    case 'torn_tail_cut':
      return { type: 'torn_tail_cut', runId: run, message: event.message };
  }
}

function outcomeEvent(o: RunOutcome): CliEvent {
  return {
    type: 'outcome',
    runId: o.runId,
    status: o.status,
    ...(o.reason ? { reason: o.reason } : {}),
    ...(o.limit ? { limit: o.limit } : {}),
    ...(o.failure ? { failure: o.failure, failureText: failureLine(o.failure) } : {}),
  };
}

/** What to type after a failure, by its first action. */
const CLI_HINTS: Record<FailureAction, string> = {
  set_key: 'set ANTHROPIC_API_KEY, then `agent-checkpoints resume --run ID`',
  retry: 'to retry: `agent-checkpoints resume --run ID`',
  raise_limit: 'to go on: `agent-checkpoints resume --run ID` with a higher limit (LIMITS)',
  resume: 'to go on: `agent-checkpoints resume --run ID`',
  // The failure's words already say that resuming sends the same request: said once.
  show_log: 'please report this with the run and its log',
};

/** The flag that raises each limit on `resume` and `continue`. */
export const LIMIT_FLAGS = { turns: '--max-turns N', tokens: '--max-tokens N', cost: '--max-cost-usd X' } as const;

/** What to type to go on past a limit: "`agent-checkpoints resume --run r1 --max-turns N` (N above 50)". */
export function raiseHint(runId: string, limit: { readonly kind: keyof typeof LIMIT_FLAGS; readonly max: number }): string {
  const flag = LIMIT_FLAGS[limit.kind];
  return `\`agent-checkpoints resume --run ${runId} ${flag}\` (${flag.slice(-1)} above ${limit.max})`;
}

/** The outcome on stderr; a failure also in the words every host uses, with what to type next. */
function outcomeLine(o: RunOutcome): string {
  const line = `run ${o.runId}: ${o.status}${o.reason ? `: ${o.reason}` : ''}`;
  if (!o.failure) return line;
  const first = describeFailure(o.failure).actions[0];
  const limit = o.failure.limit;
  const said = first === 'raise_limit' && limit ? `to go on: ${raiseHint(o.runId, limit)}` : first ? CLI_HINTS[first] : undefined;
  const hint = said !== undefined ? ` (${said.replace('ID', o.runId)})` : '';
  return `${line}\n  ${failureLine(o.failure)}${hint}`;
}

/** The plan as the CLI prints it: a line of progress, then one line a step. */
function planText(plan: Plan): string {
  if (plan.steps.length === 0) return '  plan cleared\n';
  return [`  plan (${planSummary(plan.steps)}):`, ...planStepLines(plan.steps).map((line) => `    ${line}`), ''].join('\n');
}

/** Text mode: streamed words on stdout, a line per finished call, retries on stderr. */
function textOutput(sink: Sink, summaries: Summaries): RunOutput {
  let midLine = false;
  const endLine = (): void => {
    if (midLine) sink.out('\n');
    midLine = false;
  };
  return {
    event(event) {
      const e = toCliEvent(event, summaries);
      if (e?.type === 'text' || e?.type === 'thinking') {
        sink.out(e.text);
        midLine = !e.text.endsWith('\n');
      } else if (e?.type === 'call' && ENDED.has(e.status)) {
        endLine();
        const detail = e.reason ?? e.error;
        sink.out(`  [${MARK[e.status]}] ${e.summary}${e.status !== 'succeeded' && detail ? ` (${detail})` : ''}\n`);
        const plan = summaries.changedPlan(e);
        if (plan) sink.out(planText(plan));
      } else if (e?.type === 'retry') {
        endLine();
        sink.err(`  model retry ${e.attempt}: ${e.error}\n`);
      }
    },
    outcome(o) {
      endLine();
      sink.err(`${outcomeLine(o)}\n`);
    },
  };
}

/** `history`: a resumed run's messages, so calls asked for before the resume are named too. */
export function createRunOutput(mode: OutputMode, sink: Sink, tools: ToolRegistry, history: readonly MessageParam[] = []): RunOutput {
  if (mode === 'quiet') return { event: () => undefined, outcome: (o) => sink.err(`${outcomeLine(o)}\n`) };
  const summaries = new Summaries(tools, history);
  if (mode === 'text') return textOutput(sink, summaries);
  const print = (e: CliEvent): void => sink.out(`${JSON.stringify(e)}\n`);
  return {
    event(event) {
      const e = toCliEvent(event, summaries);
      if (e !== undefined) print(e);
      const plan = e?.type === 'call' ? summaries.changedPlan(e) : undefined;
      if (plan) print({ type: 'plan', runId: event.runId, steps: plan.steps });
    },
    outcome: (o) => print(outcomeEvent(o)),
  };
}
