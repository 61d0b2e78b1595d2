import type { CallRow, PatchRow, ProblemRow, RunHeader, RunView, StepRow } from '../protocol/viewModel';
import { finderOf, runTitle } from '../words/run-title';

// The timeline as a flat list of visible rows: what the virtualised list and keyboard model
// work on. A row is visible when all its ancestors are expanded.

export type RowKind = 'run' | 'step' | 'call' | 'effect' | 'patch' | 'problem';

export interface FlatRow {
  readonly key: string;
  readonly kind: RowKind;
  /** 1-based depth (aria-level). */
  readonly level: number;
  readonly expandable: boolean;
  readonly expanded: boolean;
  /** Index of the parent row in the flat list, -1 for a run. */
  readonly parent: number;
  /** 1-based position among siblings and the sibling count (aria-posinset / aria-setsize). */
  readonly posinset: number;
  readonly setsize: number;
  readonly run: RunHeader;
  /** A run row: its title, and a fork's parent's (words/run-title). */
  readonly names?: { readonly title: string; readonly parent?: string };
  readonly step?: StepRow;
  readonly call?: CallRow;
  readonly patch?: PatchRow;
  /** A problem row: an error or warning the editor reported after the call's writes. */
  readonly problem?: ProblemRow;
}

const SEP = '\u001f';

export const rowKey = {
  run: (runId: string) => `r${SEP}${runId}`,
  step: (runId: string, stepId: number) => `s${SEP}${runId}${SEP}${stepId}`,
  call: (runId: string, callId: string) => `c${SEP}${runId}${SEP}${callId}`,
  effect: (runId: string, callId: string) => `e${SEP}${runId}${SEP}${callId}`,
  patch: (runId: string, callId: string, patchId: string) => `p${SEP}${runId}${SEP}${callId}${SEP}${patchId}`,
  problem: (runId: string, callId: string, index: number) => `d${SEP}${runId}${SEP}${callId}${SEP}${index}`,
};

function callChildren(call: CallRow): number {
  return call.patches.length + (call.effect ? 1 : 0) + (call.problems?.length ?? 0);
}

/** Newest run first, then each expanded node's children in order. */
export function flatten(runs: readonly RunView[], expanded: ReadonlySet<string>): FlatRow[] {
  const rows: FlatRow[] = [];
  const find = finderOf(runs.map((run) => run.header));
  runs.forEach((run, runIndex) => {
    const header = run.header;
    const parent = header.parent && find(header.parent.runId);
    const key = rowKey.run(header.runId);
    const open = expanded.has(key) && run.steps.length > 0;
    const runRow =
      rows.push({
        key,
        kind: 'run',
        level: 1,
        expandable: run.steps.length > 0,
        expanded: open,
        parent: -1,
        posinset: runIndex + 1,
        setsize: runs.length,
        run: header,
        names: { title: runTitle(header, find), ...(parent ? { parent: runTitle(parent, find) } : {}) },
      }) - 1;
    if (open) pushSteps(rows, run, runRow, expanded);
  });
  return rows;
}

/** How many listed forks deep each run is (0: not a fork of a listed run; at most 3): its rows are indented by it, under its parent. */
export function forkDepths(runs: readonly RunHeader[]): Map<string, number> {
  const byId = new Map(runs.map((run) => [run.runId, run]));
  const depths = new Map<string, number>();
  for (const run of runs) {
    let depth = 0;
    for (let at = run; depth < 3 && at.parent && byId.has(at.parent.runId); depth++) at = byId.get(at.parent.runId)!;
    depths.set(run.runId, depth);
  }
  return depths;
}

function pushSteps(rows: FlatRow[], run: RunView, parent: number, expanded: ReadonlySet<string>): void {
  const header = run.header;
  const count = run.steps.length;
  for (let i = 0; i < count; i++) {
    const step = run.steps[i]!;
    const key = rowKey.step(header.runId, step.stepId);
    const expandable = step.calls.length > 0;
    const open = expandable && expanded.has(key);
    const stepRow =
      rows.push({ key, kind: 'step', level: 2, expandable, expanded: open, parent, posinset: i + 1, setsize: count, run: header, step }) -
      1;
    if (open) pushCalls(rows, header, step, stepRow, expanded);
  }
}

function pushCalls(rows: FlatRow[], header: RunHeader, step: StepRow, parent: number, expanded: ReadonlySet<string>): void {
  step.calls.forEach((call, i) => {
    const key = rowKey.call(header.runId, call.callId);
    const children = callChildren(call);
    const open = children > 0 && expanded.has(key);
    const callRow =
      rows.push({
        key,
        kind: 'call',
        level: 3,
        expandable: children > 0,
        expanded: open,
        parent,
        posinset: i + 1,
        setsize: step.calls.length,
        run: header,
        step,
        call,
      }) - 1;
    if (!open) return;
    const below = callChildRows(header, call);
    below.forEach((child, j) =>
      rows.push({
        ...child,
        level: 4,
        expandable: false,
        expanded: false,
        parent: callRow,
        posinset: j + 1,
        setsize: below.length,
        run: header,
        step,
        call,
      }),
    );
  });
}

/** The rows under an open call: its external effect, its patches, the problems the editor reported after its writes. */
function callChildRows(header: RunHeader, call: CallRow): Pick<FlatRow, 'key' | 'kind' | 'patch' | 'problem'>[] {
  return [
    ...(call.effect ? [{ key: rowKey.effect(header.runId, call.callId), kind: 'effect' as const }] : []),
    ...call.patches.map((patch) => ({ key: rowKey.patch(header.runId, call.callId, patch.patchId), kind: 'patch' as const, patch })),
    ...(call.problems ?? []).map((problem, index) => ({
      key: rowKey.problem(header.runId, call.callId, index),
      kind: 'problem' as const,
      problem,
    })),
  ];
}

export function indexOfKey(rows: readonly FlatRow[], key: string | null): number {
  if (key === null) return -1;
  return rows.findIndex((r) => r.key === key);
}

/** `data-vscode-context` of a row: what `webview/context` menu entries receive and test in `when`. */
export function contextOf(row: FlatRow): Record<string, unknown> {
  const context: Record<string, unknown> = { webviewSection: row.kind, runId: row.run.runId, preventDefaultContextMenuItems: true };
  if (row.patch) {
    context.patchId = row.patch.patchId;
    context.patchState = row.patch.state;
  }
  if (row.kind === 'step' && row.step) context.checkpointId = row.step.checkpointId;
  if (row.kind === 'call' && row.call?.checkpointId) context.checkpointId = row.call.checkpointId;
  return context;
}
