import { hasExternalEffect } from '../ledger/schema';
import type { RunWriter } from '../store/contract';
import type { ResumeState } from '../store/resume-state';
import type { Budget, InstructionRecord, NewRecord } from '../store/records';
import { toolsOfRun, type ToolRegistry } from '../tools/registry';
import { limitHit, raiseRecords, usd, type LimitRaise } from './budget';
import type { CallEnv } from './calls';
import { ResumeError } from './errors';
import { loopSteps, runGuarded } from './loop';
import { instructionChangeNote, instructionChanges } from './project-instructions';
import { fileChangesNote } from './recovery-note';
import { classifyLatestPatches } from './resume';
import { RunSession } from './session';
import type { RunOutcome, RuntimeDeps, RuntimeListener } from './types';
import { settleCutRestores } from '../restore/settle';
import { effectsToUndo, undoFacts } from '../restore/compensation';
import { takeInAncestorChanges } from './ancestor-changes';
import { declineUnrunCalls, unsettledCall } from './declined-calls';

// A new instruction for a run that stopped: the person's words become the next user message
// of the same history, in one commit group with an `instruction` record and save point; a
// limit the run had reached is raised by a stated amount first. Then the loop goes on.

export interface ContinueOptions {
  /** Turns added when the run had reached its turn limit (and no raise was given). */
  readonly moreTurns: number;
  /** Limits the person chose (recorded with the instruction); instead of the automatic raise. */
  readonly raise?: LimitRaise;
  /** The calls whose external effects the instruction asks the agent to undo (recorded; its calls compensate them). */
  readonly undo?: readonly string[];
}

/** The person's raise as records, or a ResumeError when it does not raise. */
function chosenRaise(runId: string, budget: Budget, raise: LimitRaise | undefined): NewRecord[] {
  if (!raise) return [];
  try {
    return raiseRecords(budget, raise);
  } catch (error) {
    throw new ResumeError(`run ${runId}: ${(error as Error).message}; nothing was changed`, 'invalid');
  }
}

/** Token and cost limits grow by half when reached. */
const GROWTH = 1.5;

type Raised = NonNullable<InstructionRecord['raised']>;

/** The raise a run at a limit needs to take one more instruction, and what it says. */
export function raiseFor(budget: Budget, moreTurns: number): { raise: LimitRaise; raised: Raised } | undefined {
  const hit = limitHit(budget);
  if (!hit) return undefined;
  if (hit.kind === 'turns') {
    const to = Math.max(budget.maxTurns, budget.turns) + moreTurns;
    return { raise: { maxTurns: to }, raised: { kind: 'turns', from: hit.max, to } };
  }
  // A cost limit grows to whole cents, unless that would not raise it (a limit under a few cents).
  const cents = Math.round(hit.max * GROWTH * 100) / 100;
  const to = hit.kind === 'tokens' ? Math.ceil(hit.max * GROWTH) : cents > hit.max ? cents : Number((hit.max * GROWTH).toPrecision(6));
  const raise = hit.kind === 'tokens' ? { maxTokens: to } : { maxCostUsd: to };
  return { raise, raised: { kind: hit.kind, from: hit.max, to } };
}

/** "turn limit raised by 10 (50 -> 60)". */
export function describeRaise(raised: Raised): string {
  const unit = raised.kind === 'turns' ? 'turn' : raised.kind === 'tokens' ? 'token' : 'cost';
  if (raised.kind !== 'cost') return `${unit} limit raised by ${raised.to - raised.from} (${raised.from} -> ${raised.to})`;
  const by = usd(Number((raised.to - raised.from).toPrecision(12)));
  return `${unit} limit raised by ${by} (${usd(raised.from, raised.to)} -> ${usd(raised.to, raised.from)})`;
}

/** The calls to undo, each one a call of the run's active history with an external effect; a ResumeError otherwise. */
function undoOf(state: ResumeState, undo: readonly string[] | undefined): { undo?: string[] } {
  if (undo === undefined || undo.length === 0) return {};
  const known = new Map(state.ledger.map((e) => [e.callId, e]));
  for (const callId of undo) {
    const entry = known.get(callId);
    if (!entry || !hasExternalEffect(entry))
      throw new ResumeError(`run ${state.run.runId}: call ${callId} has no external effect to undo; nothing was changed`, 'invalid');
  }
  return { undo: [...new Set(undo)] };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// interrupted: a window closed mid-run and recorded so (a crash leaves it running: resume that first).
const CONTINUABLE = new Set(['completed', 'failed', 'paused', 'cancelled', 'interrupted']);

function refusal(state: ResumeState): string | undefined {
  if (!CONTINUABLE.has(state.status)) return `it is ${state.status}: resume it instead`;
  return unsettledCall(state);
}

export async function continueWithInstruction(
  deps: RuntimeDeps,
  tools: ToolRegistry,
  emit: RuntimeListener,
  request: { runId: string; instruction: string; signal: AbortSignal; options: ContinueOptions },
): Promise<RunOutcome> {
  const { runId, signal } = request;
  const text = request.instruction.trim();
  if (text === '') throw new ResumeError(`run ${runId}: the instruction is empty; nothing was changed`, 'invalid');
  const writer: RunWriter = await deps.store.openWriter(runId);
  try {
    const settled = await settleCutRestores(deps.workspace, writer);
    const refused = refusal(settled);
    if (refused !== undefined)
      throw new ResumeError(`run ${runId} cannot take a new instruction: ${refused}; nothing was changed`, 'invalid');
    const state = await takeInAncestorChanges(deps.store, writer, settled);
    const session = new RunSession(deps, writer, state.run, emit, state);
    const chosen = chosenRaise(runId, session.budget, request.options.raise);
    const limit = chosen.length > 0 ? undefined : raiseFor(session.budget, request.options.moreTurns);
    const after = state.status as InstructionRecord['after'];
    const records: NewRecord[] = [
      ...chosen,
      ...(limit ? raiseRecords(session.budget, limit.raise) : []),
      { type: 'instruction', text, after, ...(limit ? { raised: limit.raised } : {}), ...undoOf(state, request.options.undo) },
      ...(limit
        ? [{ type: 'note' as const, kind: 'info' as const, text: capitalise(`${describeRaise(limit.raised)} for the new instruction.`) }]
        : []),
      { type: 'status', status: 'running', reason: 'new instruction' },
    ];
    const instructionsChanged = instructionChangeNote(await instructionChanges(deps.workspace, state.run.prompt));
    const runTools = toolsOfRun(tools, state.run.tools);
    const declined = await declineUnrunCalls(session, runTools, state, text);
    const undoing = undoOf(state, request.options.undo).undo ?? [];
    session.stepId += 1;
    const env: CallEnv = { session, tools: runTools, signal, truncated: new Set() };
    return await runGuarded(session, signal, async () => {
      const filesChanged = fileChangesNote(state.fileChanges ?? [], await classifyLatestPatches(deps.workspace, state.patches));
      const content = [
        ...declined.results,
        ...(filesChanged ? [{ type: 'text' as const, text: filesChanged }] : []),
        { type: 'text' as const, text },
        ...(undoing.length > 0 ? [{ type: 'text' as const, text: undoFacts(effectsToUndo(state, undoing)) }] : []),
        ...(instructionsChanged !== undefined ? [{ type: 'text' as const, text: instructionsChanged }] : []),
      ];
      await session.save('instruction', [...declined.records, ...records, session.messageRecord({ role: 'user', content })]);
      return loopSteps(env);
    });
  } finally {
    await writer.close().catch(() => undefined);
  }
}
