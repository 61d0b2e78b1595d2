import type { CallRow, RunView, StepRow } from '../protocol/viewModel';
import { rowKey } from './tree';

// Search and filter of the Timeline: free words, `tool:`, `file:` and `status:` terms. Pure, so
// what matches is tested without a DOM. A filtered run keeps only its matching steps, and a
// step keeps only its matching calls when the filter names a tool, a file or a status.

/** What a call's status chip may say: a ledger status, or a group of them. */
export const STATUS_FILTERS = ['failed', 'uncertain', 'running', 'waiting', 'succeeded', 'changed'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

export interface TimelineFilter {
  /** Lower-cased words that must all appear in a step (its text, instruction, calls) or the run's task. */
  readonly words: readonly string[];
  readonly tools: readonly string[];
  readonly files: readonly string[];
  readonly statuses: readonly StatusFilter[];
}

export const NO_FILTER: TimelineFilter = { words: [], tools: [], files: [], statuses: [] };

const STATUS_WORDS: Record<string, StatusFilter> = {
  failed: 'failed',
  error: 'failed',
  uncertain: 'uncertain',
  running: 'running',
  started: 'running',
  waiting: 'waiting',
  planned: 'waiting',
  approved: 'waiting',
  succeeded: 'succeeded',
  ok: 'succeeded',
  changed: 'changed',
  patch: 'changed',
};

/** Reads "tool:read_file file:src/a.ts status:failed retry budget" (quotes keep spaces: file:"my dir/x"). */
export function parseFilter(query: string): TimelineFilter {
  const words: string[] = [];
  const tools: string[] = [];
  const files: string[] = [];
  const statuses: StatusFilter[] = [];
  for (const match of query.matchAll(/(\w+:)?(?:"([^"]*)"?|(\S+))/g)) {
    const key = match[1]?.toLowerCase();
    const value = (match[2] ?? match[3] ?? '').toLowerCase();
    if (value === '') continue;
    if (key === 'tool:') tools.push(value);
    else if (key === 'file:' || key === 'path:') files.push(value);
    else if (key === 'status:' || key === 'is:') {
      const status = STATUS_WORDS[value];
      if (status !== undefined) statuses.push(status);
      else words.push(`${key}${value}`);
    } else words.push(`${key ?? ''}${value}`);
  }
  return { words, tools, files, statuses };
}

export function isEmptyFilter(filter: TimelineFilter): boolean {
  return filter.words.length + filter.tools.length + filter.files.length + filter.statuses.length === 0;
}

/** The filter narrows calls (not only steps): a tool, file or status is named. */
function narrowsCalls(filter: TimelineFilter): boolean {
  return filter.tools.length + filter.files.length + filter.statuses.length > 0;
}

function statusOf(call: CallRow, wanted: StatusFilter): boolean {
  switch (wanted) {
    case 'failed':
      return call.isError || call.status === 'failed';
    case 'uncertain':
      return call.status === 'uncertain';
    case 'running':
      return call.status === 'started';
    case 'waiting':
      return call.status === 'planned' || call.status === 'approved';
    case 'succeeded':
      return call.status === 'succeeded' && !call.isError;
    case 'changed':
      return call.patches.length > 0;
  }
}

function callText(call: CallRow): string {
  return [call.summary, call.toolName, call.input, call.detail ?? '', call.result ?? '', ...call.patches.map((p) => p.path)]
    .join('\n')
    .toLowerCase();
}

/** A call matches every tool, file and status term (each term: any of its kind). */
export function callMatches(call: CallRow, filter: TimelineFilter): boolean {
  if (filter.tools.length > 0 && !filter.tools.some((t) => call.toolName.toLowerCase().includes(t))) return false;
  if (filter.files.length > 0) {
    const paths = [...call.patches.map((p) => p.path), call.input, call.summary].join('\n').toLowerCase();
    if (!filter.files.some((f) => paths.includes(f))) return false;
  }
  if (filter.statuses.length > 0 && !filter.statuses.some((s) => statusOf(call, s))) return false;
  return true;
}

function stepText(step: StepRow): string {
  return [step.text ?? '', step.instruction ?? '', step.thinking ?? ''].join('\n').toLowerCase();
}

/** The step narrowed to what matches, or undefined when nothing in it does. */
export function filterStep(step: StepRow, filter: TimelineFilter): StepRow | undefined {
  const calls = narrowsCalls(filter) ? step.calls.filter((c) => callMatches(c, filter)) : step.calls;
  if (narrowsCalls(filter) && calls.length === 0) return undefined;
  if (filter.words.length > 0) {
    const text = [stepText(step), ...calls.map(callText)].join('\n');
    if (!filter.words.every((w) => text.includes(w))) return undefined;
  }
  return calls === step.calls ? step : { ...step, calls };
}

export interface FilterResult {
  readonly runs: readonly RunView[];
  /** Matching steps in all runs. */
  readonly steps: number;
  /** Rows to open so every match shows: the runs, and the steps whose calls matched. */
  readonly expand: ReadonlySet<string>;
}

/**
 * The runs with only their matching steps; a run whose task holds every word shows whole
 * (when no tool, file or status is named). An empty filter gives the runs as they are.
 */
export function filterRuns(runs: readonly RunView[], filter: TimelineFilter): FilterResult {
  if (isEmptyFilter(filter)) return { runs, steps: runs.reduce((n, r) => n + r.steps.length, 0), expand: new Set() };
  const out: RunView[] = [];
  const expand = new Set<string>();
  let count = 0;
  for (const run of runs) {
    const task = run.header.task.toLowerCase();
    const whole = !narrowsCalls(filter) && filter.words.every((w) => task.includes(w));
    const steps = whole
      ? run.steps
      : run.steps.flatMap((s) => {
          const kept = filterStep(s, filter);
          return kept ? [kept] : [];
        });
    if (steps.length === 0 && !whole) continue;
    out.push(steps === run.steps ? run : { header: run.header, steps });
    count += steps.length;
    expand.add(rowKey.run(run.header.runId));
    if (narrowsCalls(filter)) for (const s of steps) expand.add(rowKey.step(run.header.runId, s.stepId));
  }
  return { runs: out, steps: count, expand };
}
