// How a run is named to a person, the same on every surface (the run list, the status line, the
// pickers, Compare, the CLI): a run by its task, a fork by what made it. A leaf: no imports.

/** What naming a run needs: a listing's summary or a view's header both have it. */
export interface TitledRun {
  readonly runId: string;
  readonly task: string;
  /** A fork: the run and step it was forked from. */
  readonly parent?: { readonly runId: string; readonly step: number };
  /** The first new instruction since the run began or was forked. */
  readonly instruction?: string;
}

/** Finds a run of the same listing by its id (a fork's parent), or undefined when it is not there. */
export type FindRun = (runId: string) => TitledRun | undefined;

const TITLE_MAX = 100;
/** Forks of forks named this deep at most (a listing is untrusted: it could name a loop). */
const MAX_DEPTH = 8;

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line;
}

function titleOf(run: TitledRun, find: FindRun, depth: number): string {
  if (!run.parent) return oneLine(run.task.split('\n', 1)[0] ?? '') || `run ${run.runId}`;
  if (run.instruction !== undefined && run.instruction.trim() !== '') return oneLine(run.instruction);
  const parent = depth < MAX_DEPTH ? find(run.parent.runId) : undefined;
  const of = parent ? titleOf(parent, find, depth + 1) : oneLine(run.task.split('\n', 1)[0] ?? '') || `run ${run.parent.runId}`;
  return `Fork at step ${run.parent.step} of ${of}`;
}

/**
 * "Fix the greeting bug" for a run; for a fork, "Fork at step 4 of Fix the greeting bug" until its
 * first new instruction, then that instruction ("Use the Oxford comma").
 */
export function runTitle(run: TitledRun, find: FindRun): string {
  return titleOf(run, find, 0);
}

/** A run as one side of a comparison: its title, a fork's instruction marked as a fork's ("fork: Use the Oxford comma"). */
export function branchName(run: TitledRun, find: FindRun): string {
  const title = runTitle(run, find);
  return run.parent && run.instruction !== undefined && run.instruction.trim() !== '' ? `fork: ${title}` : title;
}

/** "Fix the greeting bug ↔ fork: Use the Oxford comma": the title of a comparison of two runs. */
export function comparisonTitle(left: TitledRun, right: TitledRun, find: FindRun): string {
  return `${branchName(left, find)} ↔ ${branchName(right, find)}`;
}

/** A finder over a listing's runs. */
export function finderOf(runs: readonly TitledRun[]): FindRun {
  const byId = new Map(runs.map((run) => [run.runId, run]));
  return (runId) => byId.get(runId);
}
