import { readLiveState } from '../patches/classify';
import { ABSENT, type Patch } from '../patches/schema';
import type { FileIntent, LedgerEntry } from '../ledger/schema';
import { hasRecordedResult, transition } from '../ledger/transitions';
import type { ToolResultBlock, ToolUseBlock } from '../model/messages';
import type { AnyTool } from '../tools/registry';
import {
  checkCancelled,
  parseInput,
  plannedEntry,
  prepareAndExecute,
  recoverMissingPatches,
  recordResult,
  resultBlock,
  runPlannedCall,
  toolContext,
  type CallEnv,
} from './calls';
import { runInAnswerOrder } from './concurrent-calls';
import type { RunSession } from './session';

export const STATUS_UNKNOWN_MESSAGE =
  'execution status unknown: the run stopped before this call finished; it may or may not have taken effect; re-evaluate before acting (check the current state instead of assuming either outcome).';

export type ReconcileOutcome =
  | 'ran' // planned, run now
  | 'reused' // finished before the interruption: recorded result reused
  | 'ran_again' // idempotent, or re-run after the probe or a person's choice
  | 'applied_before' // the probe found the write applied
  | 'conflict' // the probe found neither before nor after content
  | 'marked_done' // a person said it completed
  | 'undone_since' // succeeded, but its files are back to their content before it (restored elsewhere): not reused as done
  | 'settled' // cut by its host's end, status unknown; what it left (a command's change set) applied now, not run again
  | 'unknown'; // reported to the model as status unknown

export interface CallReport {
  readonly callId: string;
  readonly toolName: string;
  readonly summary: string;
  readonly outcome: ReconcileOutcome;
  /** Ledger status after reconciliation. */
  readonly status: LedgerEntry['status'];
  readonly isError: boolean;
}

export interface Reconciled {
  readonly results: ToolResultBlock[];
  readonly reports: CallReport[];
}

/** Entries that were started and never finished become `uncertain` before anything else. */
export async function markInterruptedCalls(session: RunSession): Promise<LedgerEntry[]> {
  const started = [...session.ledger.values()].filter((entry) => entry.status === 'started');
  if (started.length === 0) return [];
  const uncertain = started.map((entry) => transition(entry, 'uncertain', { reason: 'the run stopped while this call was running' }));
  await session.commit(uncertain.map((entry) => ({ type: 'ledger' as const, entry })));
  return uncertain;
}

/**
 * Gives every tool_use of the step exactly one result, in tool_use order; read-only calls next to
 * each other run at once (concurrent-calls.ts), anything else alone.
 */
export async function reconcileCalls(env: CallEnv, toolUses: readonly ToolUseBlock[]): Promise<Reconciled> {
  const done = await runInAnswerOrder(
    toolUses.length,
    (i) => readsOnly(env, toolUses[i]!),
    (i, turn) => reconcileReported(turn === undefined ? env : { ...env, approvalTurn: turn }, toolUses[i]!),
  );
  return { results: done.map((d) => d.block), reports: done.map((d) => d.report) };
}

/** A call that may run beside others: its tool only reads and may run again (a cut one is run again on resume). */
function readsOnly(env: CallEnv, toolUse: ToolUseBlock): boolean {
  const tool = env.tools.get(toolUse.name);
  return tool?.concurrentRead === true && tool.idempotency === 'idempotent' && !env.truncated.has(toolUse.id);
}

async function reconcileReported(env: CallEnv, toolUse: ToolUseBlock): Promise<{ block: ToolResultBlock; report: CallReport }> {
  checkCancelled(env.signal);
  const tool = env.tools.get(toolUse.name);
  const { block, outcome } = await reconcileOne(env, toolUse, tool);
  const entry = env.session.ledger.get(toolUse.id)!;
  const report: CallReport = {
    callId: toolUse.id,
    toolName: toolUse.name,
    summary: summaryOf(tool, toolUse),
    outcome,
    status: entry.status,
    isError: block.is_error === true,
  };
  return { block, report };
}

export const UNDONE_SINCE_MESSAGE =
  'Since then its change was undone: the file is back to its content before this call (a person restored it, rolled it back or undid it); the change is not in the file now';

/** The files of a succeeded call whose change is gone: back to their content before it, or rolled back (and not re-applied); else none. */
async function undoneSince(env: CallEnv, entry: LedgerEntry): Promise<string[]> {
  const patches = (entry.patchIds ?? []).map((id) => env.session.patchById(id));
  if (patches.length === 0 || patches.some((p) => p === undefined)) return [];
  const paths: string[] = [];
  for (const patch of patches as Patch[]) {
    const live = await readLiveState(env.session.deps.workspace, patch);
    if (live !== 'not_applied' && !(patch.state === 'rolled_back' && live !== 'applied')) return [];
    paths.push(patch.path);
  }
  return paths;
}

function resultContent(block: ToolResultBlock): Exclude<ToolResultBlock['content'], string | undefined> {
  if (typeof block.content === 'string') return block.content === '' ? [] : [{ type: 'text', text: block.content }];
  return block.content ?? [];
}

function summaryOf(tool: AnyTool | undefined, toolUse: ToolUseBlock): string {
  if (!tool) return toolUse.name;
  const parsed = parseInput(tool, toolUse);
  return parsed.ok ? tool.summarize(parsed.input) : toolUse.name;
}

async function entryOf(env: CallEnv, toolUse: ToolUseBlock, tool: AnyTool | undefined): Promise<LedgerEntry> {
  const existing = env.session.ledger.get(toolUse.id);
  if (existing) return existing;
  const entry = plannedEntry(toolUse, tool, env.session.stepId, env.session.deps.clock.now());
  await env.session.save('tool_planned', [{ type: 'ledger', entry }], { callId: entry.callId });
  return entry;
}

async function reconcileOne(
  env: CallEnv,
  toolUse: ToolUseBlock,
  tool: AnyTool | undefined,
): Promise<{ block: ToolResultBlock; outcome: ReconcileOutcome }> {
  const entry = await entryOf(env, toolUse, tool);
  if (hasRecordedResult(entry)) {
    const block = await env.session.recordedResult(entry.resultRef!);
    if (entry.status === 'uncertain') return { block, outcome: 'unknown' };
    const undone = entry.status === 'succeeded' ? await undoneSince(env, entry) : [];
    if (undone.length === 0) return { block, outcome: 'reused' };
    const text = `${UNDONE_SINCE_MESSAGE} (${undone.join(', ')})`;
    return { block: { ...block, content: [...resultContent(block), { type: 'text', text }] }, outcome: 'undone_since' };
  }
  if (entry.status === 'planned' || entry.status === 'approved')
    return { block: await runPlannedCall(env, toolUse, entry), outcome: 'ran' };
  if (entry.status === 'succeeded' || entry.status === 'failed') {
    // Finished without a recorded result (an older record): say what the ledger knows, run nothing.
    const content =
      entry.status === 'failed'
        ? `${toolUse.name} failed: ${entry.error ?? 'no details recorded'}`
        : `${toolUse.name} completed before the interruption; its output was not recorded.`;
    return { block: resultBlock(toolUse.id, content, entry.status === 'failed'), outcome: 'reused' };
  }
  if (entry.status !== 'uncertain' || tool === undefined) return reportUnknown(env, entry);
  const parsed = parseInput(tool, toolUse);
  if (!parsed.ok) return reportUnknown(env, entry);
  if (entry.idempotency === 'idempotent') return { block: await prepareAndExecute(env, tool, parsed.input, entry), outcome: 'ran_again' };
  if (entry.idempotency === 'conditional' && entry.intents !== undefined)
    return probeAndSettle(env, tool, parsed.input, entry, entry.intents);
  return askAboutUncertain(env, tool, parsed.input, entry);
}

async function reportUnknown(env: CallEnv, entry: LedgerEntry): Promise<{ block: ToolResultBlock; outcome: ReconcileOutcome }> {
  const block = await recordResult(
    env,
    entry,
    'uncertain',
    { content: STATUS_UNKNOWN_MESSAGE, isError: true },
    { reason: 'reported to the model as status unknown' },
  );
  return { block, outcome: 'unknown' };
}

type ProbeVerdict = { kind: 'applied' } | { kind: 'not_applied' } | { kind: 'conflict'; paths: string[] };

/** File tools: compares live content with the recorded write-ahead intents. */
export async function probeIntents(env: CallEnv, intents: readonly FileIntent[]): Promise<ProbeVerdict> {
  let applied = 0;
  let notApplied = 0;
  const conflicts: string[] = [];
  for (const intent of intents) {
    const live = await env.session.deps.workspace.read(intent.path);
    const hash = live === null ? ABSENT : live.hash;
    if (hash === intent.afterHash) applied++;
    else if (hash === intent.beforeHash) notApplied++;
    else conflicts.push(intent.path);
  }
  if (conflicts.length > 0) return { kind: 'conflict', paths: conflicts };
  if (notApplied === 0) return { kind: 'applied' };
  if (applied === 0) return { kind: 'not_applied' };
  return { kind: 'conflict', paths: intents.map((intent) => intent.path) };
}

async function probeAndSettle(
  env: CallEnv,
  tool: AnyTool,
  input: unknown,
  entry: LedgerEntry,
  intents: readonly FileIntent[],
): Promise<{ block: ToolResultBlock; outcome: ReconcileOutcome }> {
  const verdict = await probeIntents(env, intents);
  if (verdict.kind === 'not_applied') return { block: await prepareAndExecute(env, tool, input, entry), outcome: 'ran_again' };
  if (verdict.kind === 'applied') {
    const paths = intents.map((intent) => intent.path).join(', ');
    const content = `${tool.summarize(input)}: was applied before the interruption (${paths} already has the intended content); it was not run again.`;
    const patchIds = await recoverMissingPatches(env, entry, intents);
    const block = await recordResult(
      env,
      entry,
      'succeeded',
      { content },
      { reason: 'probe: live content equals the intended result', ...(patchIds.length > 0 ? { patchIds } : {}) },
    );
    return { block, outcome: 'applied_before' };
  }
  const content = `${tool.summarize(input)}: not applied, conflict: ${verdict.paths.join(', ')} changed after this call was prepared and has neither the content it expected nor the content it would have written. Read the file(s) again before changing them.`;
  const block = await recordResult(
    env,
    entry,
    'failed',
    { content, isError: true },
    { reason: `probe: conflict on ${verdict.paths.join(', ')}` },
  );
  return { block, outcome: 'conflict' };
}

/** What an interrupted call left, settled by its tool (once: the leftover goes after the result is recorded). */
async function settleLeftover(
  env: CallEnv,
  tool: AnyTool,
  input: unknown,
  entry: LedgerEntry,
): Promise<{ block: ToolResultBlock; outcome: ReconcileOutcome } | undefined> {
  if (tool.settle === undefined) return undefined;
  const ctx = toolContext(env, entry);
  const output = await tool.settle(input, ctx);
  if (output === undefined) return undefined;
  const patchIds = ctx.patchIds.length > 0 ? { patchIds: [...ctx.patchIds] } : {};
  // Whether the call finished is unknown (it ended with its host): said first, then what was settled.
  const content = `${STATUS_UNKNOWN_MESSAGE}\n${output.content}`;
  const block = await recordResult(
    env,
    entry,
    'uncertain',
    { content, isError: true },
    { reason: 'settled after the interruption', ...patchIds },
  );
  await output.afterRecorded?.();
  return { block, outcome: 'settled' };
}

/** Non-idempotent calls are never run again automatically: a person decides, or the model hears "unknown". */
async function askAboutUncertain(
  env: CallEnv,
  tool: AnyTool,
  input: unknown,
  entry: LedgerEntry,
): Promise<{ block: ToolResultBlock; outcome: ReconcileOutcome }> {
  const settled = await settleLeftover(env, tool, input, entry);
  if (settled !== undefined) return settled;
  if (entry.replayPolicy === 'never') return reportUnknown(env, entry);
  const { session } = env;
  const choice = await session.deps.approver.askUncertain(
    { runId: session.runId, callId: entry.callId, toolName: tool.name, summary: tool.summarize(input) },
    env.signal,
  );
  checkCancelled(env.signal);
  if (choice === 'run_again') return { block: await prepareAndExecute(env, tool, input, entry), outcome: 'ran_again' };
  if (choice === 'mark_done') {
    const content = `${tool.summarize(input)}: the run stopped before its result was recorded; the user confirmed that it completed. Its output is not available; do not run it again.`;
    const block = await recordResult(env, entry, 'succeeded', { content }, { reason: 'marked done by the user' });
    return { block, outcome: 'marked_done' };
  }
  return reportUnknown(env, entry);
}
