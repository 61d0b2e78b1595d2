import { transition } from '../ledger/transitions';
import { toolUsesOf, type MessageParam } from '../model/messages';
import { readLiveState } from '../patches/classify';
import type { Patch } from '../patches/schema';
import type { Workspace } from '../ports';
import { StoreError, type RunWriter } from '../store/contract';
import { settleCutRestores } from '../restore/settle';
import { takeInAncestorChanges } from './ancestor-changes';
import { restoredCallsOf } from './declined-calls';
import { describeTornTailCut } from './resumable';
import type { NewRecord } from '../store/records';
import type { ResumeState } from '../store/resume-state';
import { toolsOfRun, type ToolRegistry } from '../tools/registry';
import { limitReached, raiseRecords, type LimitRaise } from './budget';
import type { CallEnv } from './calls';
import { ResumeError } from './errors';
import { continueAfterAnswer, isCutAnswer, loopSteps, runGuarded, type NoteBuilder } from './loop';
import { earlierEffects, RECOVERY_NOTE_MARKER, recoveryNote, toolChangeLines, type PatchLiveState } from './recovery-note';
import { instructionChanges } from './project-instructions';
import { RunSession } from './session';
import type { RunOutcome, RuntimeDeps, RuntimeListener } from './types';

function toResumeError(runId: string, error: unknown): unknown {
  if (!(error instanceof StoreError)) return error;
  const where = error.file !== undefined ? ` (${error.file}${error.offset !== undefined ? ` at byte ${error.offset}` : ''})` : '';
  switch (error.code) {
    case 'not_found':
      return new ResumeError(`run ${runId} not found: ${error.message}`, 'not_found');
    case 'lease_held':
      return new ResumeError(`run ${runId} is being written by another process: ${error.message}`, 'lease_held');
    case 'future_version':
      return new ResumeError(
        `run ${runId} was written by a newer version${where}: ${error.message}; nothing was changed`,
        'future_version',
      );
    case 'damaged':
    case 'invalid':
      return new ResumeError(`run ${runId} is damaged${where}: ${error.message}; nothing was changed`, 'damaged');
    default:
      return error;
  }
}

/** The latest patch of each file the agent wrote (and did not roll back), classified against live content. */
export async function classifyLatestPatches(workspace: Workspace, patches: readonly Patch[]): Promise<PatchLiveState[]> {
  const latest = new Map<string, Patch>();
  for (const patch of patches) if (patch.state !== 'rolled_back') latest.set(patch.path, patch);
  const states: PatchLiveState[] = [];
  for (const patch of latest.values()) states.push({ patch, live: await readLiveState(workspace, patch) });
  return states;
}

function isNoteOnly(message: MessageParam | undefined): boolean {
  if (message?.role !== 'user' || typeof message.content === 'string') return false;
  return (
    message.content.length === 1 && message.content[0]?.type === 'text' && String(message.content[0].text).startsWith(RECOVERY_NOTE_MARKER)
  );
}

/** Resumes a run: lease, state, started -> uncertain, reconciliation, recovery note, loop. */
export async function resumeRun(
  deps: RuntimeDeps,
  tools: ToolRegistry,
  emit: RuntimeListener,
  runId: string,
  signal: AbortSignal,
  options: ResumeOptions = {},
): Promise<RunOutcome> {
  const raise = options.raise ?? {};
  let writer: RunWriter;
  try {
    writer = await deps.store.openWriter(runId);
  } catch (error) {
    throw toResumeError(runId, error);
  }
  if (writer.tornTailCut) {
    const message = describeTornTailCut(runId, writer.tornTailCut);
    deps.log.log('warn', message);
    emit({ type: 'torn_tail_cut', runId, cut: writer.tornTailCut, message });
  }
  try {
    const settled = await settleCutRestores(deps.workspace, writer);
    if (settled.ended)
      return { runId, status: settled.ended.status, reason: `the run already ended (${settled.ended.status}); there is nothing to resume` };
    const state = await takeInAncestorChanges(deps.store, writer, settled);
    const session = new RunSession(deps, writer, state.run, emit, state);
    session.restoredCalls = restoredCallsOf(state);
    await raiseLimits(session, raise);
    const env: CallEnv = {
      session,
      tools: toolsOfRun(tools, state.run.tools),
      signal,
      truncated: new Set(),
      ...(options.maxContextTokens !== undefined ? { maxContextTokens: options.maxContextTokens } : {}),
    };
    return await runGuarded(session, signal, () => continueRun(env, state, tools));
  } finally {
    await writer.close().catch(() => undefined);
  }
}

export interface ResumeOptions {
  /** New limits for a run paused at one; counters are kept (design 2: Budget). */
  readonly raise?: LimitRaise;
  /** Context budget of this session (else the run's setting, else the model's window). */
  readonly maxContextTokens?: number;
}

/** Records a raise durably (limits + budget in one commit group) before anything else happens. */
async function raiseLimits(session: RunSession, raise: LimitRaise): Promise<void> {
  let records: NewRecord[];
  try {
    records = raiseRecords(session.budget, raise);
  } catch (error) {
    throw new ResumeError(`run ${session.runId}: ${(error as Error).message}; nothing was changed`, 'invalid');
  }
  if (records.length > 0) await session.commit(records);
}

/** `current`: every tool this version has (the run's own are env.tools), for the note of what changed. */
async function continueRun(env: CallEnv, state: ResumeState, current: ToolRegistry): Promise<RunOutcome> {
  const { session } = env;
  const uncertain = [...session.ledger.values()]
    .filter((entry) => entry.status === 'started')
    .map((entry) => transition(entry, 'uncertain', { reason: 'the run stopped while this call was running' }));
  const records: NewRecord[] = uncertain.map((entry) => ({ type: 'ledger', entry }));
  await session.commit([...records, { type: 'status', status: 'running', reason: 'resumed' }]);
  if (session.messages.length === 0) {
    await session.save('run_start', [session.messageRecord({ role: 'user', content: state.run.task })]);
    return loopSteps(env);
  }
  const note = await noteBuilder(env, state, current);
  const last = session.messages[session.messages.length - 1]!;
  if (last.role === 'assistant') {
    const stopReason = session.lastStopReason;
    const dangling = toolUsesOf(last).length > 0 || isCutAnswer(stopReason);
    if (!dangling && stopReason === 'pause_turn') return loopSteps(env);
    const outcome = await continueAfterAnswer(env, last, stopReason, dangling ? note : undefined);
    if (outcome !== null) return outcome;
  } else if ((!isNoteOnly(last) || (state.fileChanges?.length ?? 0) > 0) && limitReached(session.budget) === null) {
    await session.commit([session.messageRecord({ role: 'user', content: [{ type: 'text', text: note([]) }] })]);
  }
  return loopSteps(env);
}

async function noteBuilder(env: CallEnv, state: ResumeState, current: ToolRegistry): Promise<NoteBuilder> {
  const { session } = env;
  const files = await classifyLatestPatches(session.deps.workspace, state.patches);
  const checkpoint = state.latestCheckpoint;
  const last = session.messages[session.messages.length - 1];
  const inFlight = last?.role === 'assistant' && toolUsesOf(last).length > 0;
  const lastCompletedStep = inFlight ? Math.max(0, session.stepId - 1) : session.stepId;
  const instructions = await instructionChanges(session.deps.workspace, state.run.prompt);
  return (reports) =>
    recoveryNote({
      checkpointId: checkpoint?.checkpointId ?? 'none',
      checkpointLabel: checkpoint ? `${checkpoint.label}, step ${checkpoint.stepId}` : 'no checkpoint',
      lastCompletedStep,
      reports,
      earlierEffects: earlierEffects(state.ledger, lastCompletedStep),
      files,
      instructionChanges: instructions,
      fileChanges: state.fileChanges ?? [],
      toolChanges: toolChangeLines(state.run.tools, current.specs()),
    });
}
