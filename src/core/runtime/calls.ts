import { inputHash } from '../ledger/canonical';
import { isExternalEffect, type FileIntent, type LedgerEntry } from '../ledger/schema';
import { transition, type EntryChanges } from '../ledger/transitions';
import type { ToolResultBlock, ToolUseBlock } from '../model/messages';
import { applyPreparedWrite, intentOf, recoverPatch, storeWriteBlobs } from '../patches/record';
import { loadRunReview } from '../patches/review-load';
import type { Patch } from '../patches/schema';
import { StaleContentError, PathRefusedError } from '../ports';
import type { RunFailure } from '../store/records';
import { ToolError } from '../tools/errors';
import { protectedPathReason } from '../tools/protected-paths';
import { describeInputError, type AnyTool, type ToolRegistry } from '../tools/registry';
import type { PreparedWrite, ToolContext, ToolOutput } from '../tools/types';
import type { ApprovalTurn } from './concurrent-calls';
import { ApprovalUnavailableError, guardStore, StorageFailure } from './errors';
import { ruleTarget, type RunSession } from './session';
import { CANCELLED_REASON } from './types';
import { errorText } from '../error-text';
import { WriteDiagnostics } from './diagnostics';
import { HostClosing } from './failure';

/** Stops the run at a safe point with a reason (cancelled, approval needed). */
export class PauseSignal extends Error {
  constructor(
    readonly reason: string,
    readonly failure?: RunFailure,
  ) {
    super(reason);
    this.name = 'PauseSignal';
  }
}

export interface CallEnv {
  readonly session: RunSession;
  readonly tools: ToolRegistry;
  readonly signal: AbortSignal;
  /** tool_use ids whose input was cut off at max_tokens. */
  readonly truncated: ReadonlySet<string>;
  /** Context budget of this session (resume --max-context-tokens); else the run's setting or the model's window. */
  readonly maxContextTokens?: number;
  /** A call running beside others of its answer: when it may ask a person (concurrent-calls.ts). */
  readonly approvalTurn?: ApprovalTurn;
}

export const TRUNCATED_INPUT_MESSAGE =
  'the input of this tool call was cut off at the output token limit (max_tokens), so the call was not run. Send it again with a smaller input (for example, split a large file into several writes).';

export function resultBlock(toolUseId: string, content: string, isError: boolean): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: toolUseId, content, ...(isError ? { is_error: true } : {}) };
}

export function checkCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new PauseSignal(CANCELLED_REASON);
}

/** The `planned` ledger entry of one tool_use block, before anything about it happens. */
export function plannedEntry(
  toolUse: ToolUseBlock,
  tool: AnyTool | undefined,
  stepId: number,
  now: number,
  /** The calls an instruction asked to undo: a call with an external effect made under it compensates them. */
  undoing?: readonly string[],
): LedgerEntry {
  const external = (tool?.sideEffects ?? []).some(isExternalEffect);
  return {
    ...(tool?.inverse ? { inverse: tool.inverse } : {}),
    ...(undoing && undoing.length > 0 && external ? { compensates: [...undoing] } : {}),
    callId: toolUse.id,
    stepId,
    toolName: toolUse.name,
    inputHash: inputHash(toolUse.input),
    status: 'planned',
    idempotency: tool?.idempotency ?? 'idempotent',
    replayPolicy: tool?.replayPolicy ?? 'auto',
    sideEffects: [...(tool?.sideEffects ?? [])],
    plannedAt: now,
    compensation: tool?.compensation ?? 'nothing to undo (the call was not run)',
  };
}

/** Records a terminal (or status-unknown) result: blob first, then the ledger entry and tool_finished. */
export async function recordResult(
  env: CallEnv,
  entry: LedgerEntry,
  to: LedgerEntry['status'],
  output: ToolOutput,
  changes: EntryChanges = {},
): Promise<ToolResultBlock> {
  const block = resultBlock(entry.callId, output.content, output.isError === true);
  const resultRef = await env.session.putResult(block);
  const next = transition(entry, to, {
    reason: undefined,
    ...changes,
    finishedAt: env.session.deps.clock.now(),
    resultRef,
    ...(output.isError ? { isError: true, error: firstLine(output.content) } : {}),
  });
  await env.session.save('tool_finished', [{ type: 'ledger', entry: next }], { callId: entry.callId });
  return block;
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

export function parseInput(tool: AnyTool, toolUse: ToolUseBlock): { ok: true; input: unknown } | { ok: false; message: string } {
  const parsed = tool.input.safeParse(toolUse.input);
  return parsed.success ? { ok: true, input: parsed.data } : { ok: false, message: describeInputError(tool.name, parsed.error) };
}

/** A planned (or approved) call: approval, prepare, started, execute, finished. */
export async function runPlannedCall(env: CallEnv, toolUse: ToolUseBlock, entry: LedgerEntry): Promise<ToolResultBlock> {
  checkCancelled(env.signal);
  const tool = env.tools.get(toolUse.name);
  if (env.truncated.has(toolUse.id))
    return recordResult(
      env,
      entry,
      'failed',
      { content: TRUNCATED_INPUT_MESSAGE, isError: true },
      { reason: 'input cut off at max_tokens' },
    );
  if (tool === undefined) {
    const known = env.tools
      .list()
      .map((t) => t.name)
      .join(', ');
    return recordResult(
      env,
      entry,
      'failed',
      { content: `unknown tool "${toolUse.name}"; the tools are: ${known}`, isError: true },
      { reason: 'unknown tool' },
    );
  }
  const parsed = parseInput(tool, toolUse);
  if (!parsed.ok) return recordResult(env, entry, 'failed', { content: parsed.message, isError: true }, { reason: 'invalid input' });
  let shown: string | undefined;
  if (tool.approvalSummary !== undefined && entry.status === 'planned') {
    try {
      shown = await tool.approvalSummary(parsed.input, toolContext(env, entry));
    } catch (error) {
      if (!isToolFailure(error)) throw error;
      const content = `${tool.name} refused (nobody was asked): ${errorText(error)}`;
      return recordResult(env, entry, 'failed', { content, isError: true }, { reason: 'refused before asking' });
    }
  }
  await env.approvalTurn?.wait();
  const approved = await approve(env, tool, parsed.input, entry, shown).finally(() => env.approvalTurn?.pass());
  if (approved.status === 'failed') return env.session.recordedResult(approved.resultRef!);
  return prepareAndExecute(env, tool, parsed.input, approved, shown);
}

/** Why the call must be asked whatever its policy: it writes a protected path (see core/tools/protected-paths). */
async function protectedReason(env: CallEnv, tool: AnyTool, input: unknown): Promise<string | undefined> {
  const { deps } = env.session;
  for (const path of tool.writesPaths?.(input) ?? []) {
    // A refused path fails in prepare() with its own error; only a path the workspace accepts is checked here.
    const normalized = await deps.workspace.normalize(path).catch((error: unknown) => {
      if (error instanceof PathRefusedError) return undefined;
      throw error;
    });
    const reason = normalized === undefined ? undefined : protectedPathReason(normalized, deps.protectedPaths);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * Why a call is asked whatever was allowed for the run (once; a rule for the tool does not answer
 * it, nor does the CLI's --yes): a restore went back to before it, or it undoes an earlier effect.
 */
export const RESTORED_CALL_REASON = 'the run was restored to before this call; running it again is yours to decide';
export const UNDO_CALL_REASON = 'this call undoes an effect you asked the agent to undo; each such call is yours to approve';

function askedWhateverAllowed(session: RunSession, entry: LedgerEntry): string | undefined {
  if (session.restoredCalls.has(entry.callId)) return RESTORED_CALL_REASON;
  return entry.compensates !== undefined && entry.compensates.length > 0 ? UNDO_CALL_REASON : undefined;
}

/** Asks for approval when the policy says so, the call writes a protected path, or a restore went back over it; records the decision. Returns the entry after it. */
async function approve(env: CallEnv, tool: AnyTool, input: unknown, entry: LedgerEntry, shown?: string): Promise<LedgerEntry> {
  const { session } = env;
  if (entry.status !== 'planned') return entry;
  const reason = (await protectedReason(env, tool, input)) ?? askedWhateverAllowed(session, entry) ?? tool.alwaysAsk;
  if (reason === undefined && (entry.replayPolicy !== 'ask' || session.approvals.allowedTools.has(tool.name))) return entry;
  if (session.approvals.deniedCalls.has(entry.callId)) return denied(env, tool, input, entry, false);
  if (session.approvals.allowedCalls.has(entry.callId)) {
    const next = transition(entry, 'approved', { reason: 'allowed once' });
    await session.save('tool_approved', [{ type: 'ledger', entry: next }], { callId: entry.callId });
    return next;
  }
  const request = {
    runId: session.runId,
    callId: entry.callId,
    toolName: tool.name,
    summary: shown ?? tool.summarize(input),
    input,
    ...(reason !== undefined ? { reason } : {}),
  };
  let answer;
  try {
    answer = await session.deps.approver.approve(request, env.signal);
  } catch (error) {
    checkCancelled(env.signal);
    if (error instanceof ApprovalUnavailableError) {
      const reason = `approval needed: ${request.summary} (${error.message})`;
      throw new PauseSignal(reason, { kind: 'approval', message: reason });
    }
    throw error;
  }
  checkCancelled(env.signal);
  let decision = typeof answer === 'string' ? answer : answer.decision;
  if (decision === 'deny') return denied(env, tool, input, entry, true, typeof answer === 'string' ? undefined : answer.reason);
  // A protected write is allowed once at most: a rule for the whole tool would skip the next one.
  if (reason !== undefined) decision = 'allow_once';
  const target = decision === 'allow_for_run' ? ruleTarget(tool.name) : entry.callId;
  const next = transition(entry, 'approved', {
    reason: decision === 'allow_for_run' ? `allowed for the run (${tool.name})` : 'allowed once',
  });
  await session.save(
    'tool_approved',
    [
      { type: 'approval', target, toolName: tool.name, decision },
      { type: 'ledger', entry: next },
    ],
    { callId: entry.callId },
  );
  return next;
}

async function denied(
  env: CallEnv,
  tool: AnyTool,
  input: unknown,
  entry: LedgerEntry,
  recordApproval: boolean,
  why?: string,
): Promise<LedgerEntry> {
  const said = why !== undefined && why.trim() !== '' ? ` The user's reason: ${why.trim()}` : '';
  const block = resultBlock(
    entry.callId,
    `The user denied this call (${tool.summarize(input)}); it was not run. Do not try it again; continue without it or explain what you need.${said}`,
    true,
  );
  const resultRef = await env.session.putResult(block);
  const next = transition(entry, 'failed', {
    finishedAt: env.session.deps.clock.now(),
    resultRef,
    isError: true,
    error: 'denied by the user',
    reason: 'denied by the user',
  });
  const approval = recordApproval
    ? [{ type: 'approval' as const, target: entry.callId, toolName: tool.name, decision: 'deny' as const }]
    : [];
  await env.session.save('tool_finished', [...approval, { type: 'ledger', entry: next }], { callId: entry.callId });
  return next;
}

/** prepare() (write-ahead intents), then started, then execute. */
export async function prepareAndExecute(
  env: CallEnv,
  tool: AnyTool,
  input: unknown,
  entry: LedgerEntry,
  approved?: string,
): Promise<ToolResultBlock> {
  checkCancelled(env.signal);
  const ctx = toolContext(env, entry, approved);
  let prepared: readonly PreparedWrite[] = [];
  if (tool.prepare) {
    try {
      prepared = await tool.prepare(input, ctx);
    } catch (error) {
      if (!isToolFailure(error)) throw error;
      return recordResult(env, entry, 'failed', { content: errorText(error), isError: true }, { reason: 'could not prepare the change' });
    }
  }
  // Blobs of both sides go to the store before `started`, so a write cut before its patch record can still be recorded on resume.
  const intents = [];
  for (const write of prepared) {
    const blobs = await guardStore(() => storeWriteBlobs({ blobs: env.session.deps.store }, write));
    intents.push(intentOf(write, blobs));
  }
  const started = transition(entry, 'started', { startedAt: env.session.deps.clock.now(), ...(tool.prepare ? { intents } : {}) });
  await env.session.save('tool_started', [{ type: 'ledger', entry: started }], { callId: entry.callId });
  return execute(env, tool, input, started, prepared, ctx);
}

async function execute(
  env: CallEnv,
  tool: AnyTool,
  input: unknown,
  started: LedgerEntry,
  prepared: readonly PreparedWrite[],
  ctx: ToolContextWithPatches,
): Promise<ToolResultBlock> {
  let output: ToolOutput;
  try {
    output = await tool.execute(input, ctx, prepared);
  } catch (error) {
    // A host whose window closed fails what it was still doing ("Canceled"): no outcome of the call, which the next open settles.
    if (error instanceof StorageFailure || error instanceof PauseSignal || env.signal.reason instanceof HostClosing) throw error;
    output = { content: `${tool.name} failed: ${errorText(error)}`, isError: true };
  }
  // The editor's new problems in the files written: after the writes' save points, before the result's.
  const checked = await ctx.diagnostics.afterCall(env.session, env.signal);
  if (checked !== undefined) output = { ...output, content: [output.content, checked.text].filter((t) => t !== '').join('\n\n') };
  const changes = {
    ...(ctx.patchIds.length > 0 ? { patchIds: [...ctx.patchIds] } : {}),
    ...(checked?.record !== undefined ? { diagnostics: checked.record } : {}),
    ...(output.contained === true ? { contained: true } : {}),
  };
  const block = await recordResult(env, started, output.isError ? 'failed' : 'succeeded', output, changes);
  await output.afterRecorded?.();
  return block;
}

/** Journals patches for writes of an interrupted call that happened but were never recorded. */
export async function recoverMissingPatches(env: CallEnv, entry: LedgerEntry, intents: readonly FileIntent[]): Promise<string[]> {
  const { session } = env;
  const { deps } = session;
  const patchIds: string[] = [];
  for (const intent of intents) {
    const recorded = session.patchOf(entry.callId, intent.path);
    if (recorded !== undefined) {
      patchIds.push(recorded);
      continue;
    }
    const patch = await guardStore(() =>
      recoverPatch(
        { blobs: deps.store, clock: deps.clock, newId: newPatchId(deps) },
        { runId: session.runId, stepId: entry.stepId, toolCallId: entry.callId },
        intent,
      ),
    );
    await session.save('file_written', [{ type: 'patch', patch }], { callId: entry.callId });
    patchIds.push(patch.patchId);
  }
  return patchIds;
}

function newPatchId(deps: RunSession['deps']): () => string {
  return deps.newId ?? (() => `p${deps.clock.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`);
}

function isToolFailure(error: unknown): boolean {
  return (
    error instanceof ToolError ||
    error instanceof StaleContentError ||
    error instanceof PathRefusedError ||
    (error instanceof Error && !(error instanceof StorageFailure) && !(error instanceof PauseSignal))
  );
}

type ToolContextWithPatches = ToolContext & { readonly patchIds: string[]; readonly diagnostics: WriteDiagnostics };

export function toolContext(env: CallEnv, entry: LedgerEntry, approved?: string): ToolContextWithPatches {
  const { session } = env;
  const { deps } = session;
  const patchIds: string[] = [];
  const blobs = {
    putBlob: (bytes: Uint8Array) => guardStore(() => deps.store.putBlob(bytes)),
    getBlob: (hash: string) => guardStore(() => deps.store.getBlob(hash)),
  };
  const newId = newPatchId(deps);
  const diagnostics = new WriteDiagnostics(deps.diagnostics, deps.log);
  return {
    runId: session.runId,
    callId: entry.callId,
    stepId: entry.stepId,
    workspace: deps.workspace,
    commands: deps.commands,
    signal: env.signal,
    ...(deps.gitCommits !== undefined ? { git: deps.gitCommits } : {}),
    ...(approved !== undefined ? { approved } : {}),
    runReview: () =>
      guardStore(() => loadRunReview({ readRun: (id) => deps.store.readRun(id, { intactPart: true }), ...blobs }, session.runId)),
    patchIds,
    diagnostics,
    async applyWrite(write: PreparedWrite): Promise<Patch> {
      await diagnostics.beforeWrite(write);
      const patch = await applyPreparedWrite(
        { workspace: deps.workspace, blobs, clock: deps.clock, log: deps.log, newId },
        { runId: session.runId, stepId: entry.stepId, toolCallId: entry.callId },
        write,
      );
      await session.save('file_written', [{ type: 'patch', patch }], { callId: entry.callId });
      patchIds.push(patch.patchId);
      return patch;
    },
  };
}
