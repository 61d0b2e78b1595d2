import { limitBeforeAnyRequest, raiseTo, type LimitRaise } from '../../../core/runtime/budget';
import type { CheckpointStore } from '../../../core/store/contract';
import type { RunFailure } from '../../../core/store/records';
import type { Prompts } from '../window/prompts';

// "Raise to…": the new value of a limit a run stopped at, asked of the person. Resume of a run at
// its limit asks it first (a resume into the same limit would only pause again without a request),
// the same question the failure's "Raise to…" action asks. No `vscode` import: a unit test drives it.

export interface RaiseDeps {
  readonly prompts: Pick<Prompts, 'inputBox'>;
  readonly store: Pick<CheckpointStore, 'readResumeState'>;
  /** How many turns "+N turns" adds (the maxTurns setting). */
  turnsPerRun(): number;
}

/** The new value of the limit a run stopped at, asked for; undefined when dismissed. */
export async function askRaise(deps: RaiseDeps, limit: NonNullable<RunFailure['limit']>): Promise<LimitRaise | undefined> {
  const suggested = limit.kind === 'turns' ? limit.max + deps.turnsPerRun() : limit.max * 2;
  const unit = { turns: 'model calls', tokens: 'tokens', cost: 'USD' }[limit.kind];
  const answer = await deps.prompts.inputBox({
    title: `Raise the ${limit.kind} limit`,
    prompt: `The run stopped at ${limit.max} ${unit}. Go on up to:`,
    value: String(suggested),
    validateInput: (text) => {
      const raise = raiseTo(limit, text);
      return typeof raise === 'string' ? raise : undefined;
    },
  });
  if (answer === undefined) return undefined;
  const raise = raiseTo(limit, answer);
  return typeof raise === 'string' ? undefined : raise;
}

/**
 * What a resume of the run needs first: nothing (undefined) when it can go on as it is; the raise
 * the person typed when it would stop at its limit again before any request; null when they
 * dismissed the question (then nothing is resumed).
 */
export async function raiseBeforeResume(deps: RaiseDeps, runId: string, given?: LimitRaise): Promise<LimitRaise | undefined | null> {
  const stuck = limitBeforeAnyRequest(await deps.store.readResumeState(runId), given);
  if (stuck === undefined) return given;
  return (await askRaise(deps, { kind: stuck.kind, max: stuck.max })) ?? null;
}

/** The words when the person left the limit as it was. */
export const LIMIT_LEFT = 'The limit was left as it was; the run was not resumed.';

/** The extension's services as the question needs them. */
export function raiseDepsOf(s: {
  readonly prompts: RaiseDeps['prompts'];
  readonly store: RaiseDeps['store'];
  readonly controller: { turnsPerRun(): number };
}): RaiseDeps {
  return { prompts: s.prompts, store: s.store, turnsPerRun: () => s.controller.turnsPerRun() };
}
