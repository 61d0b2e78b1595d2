import type { LedgerEntry } from '../ledger/schema';
import { hasRecordedResult, transition } from '../ledger/transitions';
import { toolUsesOf, type ToolResultBlock } from '../model/messages';
import type { ResumeState } from '../store/resume-state';
import type { NewRecord } from '../store/records';
import type { ToolRegistry } from '../tools/registry';
import { plannedEntry, resultBlock } from './calls';
import type { RunSession } from './session';

// A new instruction for a run whose last answer still has calls that never ran: a fork made "before
// this call", or a run stopped before its next call. Those calls are answered for the model as not
// run, with the person's words, by tool_result blocks appended after the kept answer (the answer and
// its thinking stay byte for byte: the default model refuses a changed prefix). A call that started
// and never finished is another matter: its effect is unknown, and only a resume settles it.

/** The ledger's reason for a call answered as not run (the Timeline shows such a call as not run, not as failed). */
export const NOT_RUN_REASON = 'not run: the person gave a new instruction instead';

/** The words of the person, as the model reads them in a declined call's result (capped). */
const SAID_MAX = 300;

export interface DeclinedCalls {
  /** Ledger records of the calls declined now (planned where the run never planned them, then failed). */
  readonly records: readonly NewRecord[];
  /** One tool_result per tool_use of the last answer, in its order: recorded results, then "not run". */
  readonly results: readonly ToolResultBlock[];
}

/** Why a call of the last answer blocks a new instruction, or undefined when none does. */
export function unsettledCall(state: ResumeState): string | undefined {
  const last = state.messages.at(-1);
  if (last?.role !== 'assistant' || state.ended) return undefined;
  const ledger = new Map(state.ledger.map((e) => [e.callId, e]));
  const open = toolUsesOf(last).find((use) => {
    const status = ledger.get(use.id)?.status;
    return status === 'started' || status === 'uncertain';
  });
  return open === undefined ? undefined : `its call ${open.name} (${open.id}) started and did not finish: resume it first`;
}

function notRunText(state: ResumeState, instruction: string): string {
  const said = instruction.length > SAID_MAX ? `${instruction.slice(0, SAID_MAX)}…` : instruction;
  const how = state.run.parent?.checkpointId !== undefined ? 'restored the run to before this call' : 'stopped the run before this call';
  return `Not run: the person ${how} and said: "${said}". Follow that instruction; run this call again only if it asks for it.`;
}

/**
 * The results that close the last answer's calls before a new instruction: each finished call's
 * recorded result, and "not run" for each call that never started. Empty when the last message is
 * not an answer with calls. Call only when unsettledCall() said nothing.
 */
export async function declineUnrunCalls(
  session: RunSession,
  tools: ToolRegistry,
  state: ResumeState,
  instruction: string,
): Promise<DeclinedCalls> {
  const last = state.messages.at(-1);
  if (last?.role !== 'assistant' || state.ended) return { records: [], results: [] };
  const ledger = new Map(state.ledger.map((e) => [e.callId, e]));
  const records: NewRecord[] = [];
  const results: ToolResultBlock[] = [];
  const now = session.deps.clock.now();
  for (const use of toolUsesOf(last)) {
    const entry: LedgerEntry = ledger.get(use.id) ?? plannedEntry(use, tools.get(use.name), state.stepId, now);
    if (hasRecordedResult(entry)) {
      results.push(await session.recordedResult(entry.resultRef!));
      continue;
    }
    const block = resultBlock(use.id, notRunText(state, instruction), true);
    const resultRef = await session.putResult(block);
    if (!ledger.has(use.id)) records.push({ type: 'ledger', entry });
    const reason = NOT_RUN_REASON;
    records.push({
      type: 'ledger',
      entry: transition(entry, 'failed', { finishedAt: now, resultRef, isError: true, error: reason, reason }),
    });
    results.push(block);
  }
  return { records, results };
}

/**
 * The calls a fork made "before this call" went back over, while the fork has not gone past them:
 * the tool_uses of its inherited last answer that never started. Resume asks before each runs again.
 */
export function restoredCallsOf(state: ResumeState): Set<string> {
  const parent = state.run.parent;
  const last = state.messages.at(-1);
  if (parent?.checkpointId === undefined || state.stepId !== parent.step || last?.role !== 'assistant') return new Set();
  const ledger = new Map(state.ledger.map((e) => [e.callId, e]));
  return new Set(
    toolUsesOf(last)
      .filter((use) => (ledger.get(use.id)?.status ?? 'planned') === 'planned')
      .map((use) => use.id),
  );
}
