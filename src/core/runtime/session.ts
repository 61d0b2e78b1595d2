import type { LedgerEntry } from '../ledger/schema';
import { MessageParam, ToolResultBlock } from '../model/messages';
import type { RunWriter, RunState } from '../store/contract';
import type { ApprovalRecord, Budget, CheckpointLabel, NewRecord, RunRecord, RunStatus, StoredRecord } from '../store/records';
import { guardStore } from './errors';
import type { RuntimeDeps, RuntimeListener } from './types';

/** The run record as the writer created it. */
export type RunInfo = Omit<RunRecord, 'v' | 'at' | 'type'>;

type NewCheckpoint = Extract<NewRecord, { type: 'checkpoint' }>;

/** Approval decisions of a run, folded from its approval records. */
export class ApprovalBook {
  readonly allowedTools = new Set<string>();
  readonly allowedCalls = new Set<string>();
  readonly deniedCalls = new Set<string>();

  add(record: Pick<ApprovalRecord, 'target' | 'toolName' | 'decision'>): void {
    if (record.decision === 'allow_for_run') this.allowedTools.add(record.toolName);
    else if (record.decision === 'allow_once') this.allowedCalls.add(record.target);
    else this.deniedCalls.add(record.target);
  }
}

export function ruleTarget(toolName: string): string {
  return `tool:${toolName}`;
}

/** Messages as the store gives them back, so what we send before and after a crash is the same. */
export function normaliseMessage(message: unknown): MessageParam {
  return MessageParam.parse(JSON.parse(JSON.stringify(message)));
}

/**
 * One writer's view of a run: the in-memory state mirrors the journal and is updated only after
 * a commit group is on disk (write-ahead).
 */
export class RunSession {
  readonly messages: MessageParam[];
  readonly ledger = new Map<string, LedgerEntry>();
  readonly approvals = new ApprovalBook();
  budget: Budget;
  stepId: number;
  status: RunStatus;
  private checkpointCount: number;
  private patchCount: number;
  /** Patch id by `callId\0path`, to find the writes a call already recorded. */
  private readonly patchesByCall = new Map<string, string>();
  lastStopReason: string | undefined;

  constructor(
    readonly deps: RuntimeDeps,
    readonly writer: RunWriter,
    readonly run: RunInfo,
    readonly emit: RuntimeListener,
    state?: RunState,
  ) {
    this.messages = state ? state.messages.map(normaliseMessage) : [];
    for (const entry of state?.ledger ?? []) this.ledger.set(entry.callId, entry);
    for (const approval of state?.approvals ?? []) this.approvals.add(approval);
    this.budget = state ? { ...state.budget } : initialBudgetOf(run);
    this.stepId = state?.stepId ?? 0;
    this.status = state?.status ?? 'running';
    this.checkpointCount = state?.checkpointCount ?? 0;
    this.patchCount = state?.patches.length ?? 0;
    for (const patch of state?.patches ?? []) this.patchesByCall.set(`${patch.toolCallId}\0${patch.path}`, patch.patchId);
    this.lastStopReason = state?.lastStopReason;
  }

  /** The patch a call recorded for a path, if any. */
  patchOf(callId: string, path: string): string | undefined {
    return this.patchesByCall.get(`${callId}\0${path}`);
  }

  get runId(): string {
    return this.run.runId;
  }

  checkpoint(
    label: CheckpointLabel,
    pending: readonly NewRecord[],
    extra: { callId?: string; status?: RunStatus; stopReason?: string } = {},
  ): NewCheckpoint {
    this.checkpointCount += 1;
    return {
      type: 'checkpoint',
      checkpointId: `c${this.checkpointCount}`,
      stepId: this.stepId,
      label,
      // A compaction's messages are the whole history from index 0.
      messageCount:
        (pending.some((r) => r.type === 'compaction') ? 0 : this.messages.length) + pending.filter((r) => r.type === 'message').length,
      patchCount: this.patchCount + pending.filter((r) => r.type === 'patch').length,
      status: extra.status ?? 'running',
      budget: { ...(budgetIn(pending) ?? this.budget) },
      ...(extra.callId !== undefined ? { callId: extra.callId } : {}),
      ...(extra.stopReason !== undefined ? { stopReason: extra.stopReason } : {}),
    };
  }

  /** Appends records plus a checkpoint as one commit group. */
  async save(
    label: CheckpointLabel,
    records: readonly NewRecord[],
    extra: { callId?: string; status?: RunStatus; stopReason?: string } = {},
  ): Promise<void> {
    await this.commit([...records, this.checkpoint(label, records, extra)]);
  }

  async commit(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    const stored = await guardStore(() => this.writer.append(records));
    for (const record of stored) this.apply(record);
    this.emit({ type: 'records', runId: this.runId, records: stored });
    for (const record of stored) this.announce(record);
    return stored;
  }

  messageRecord(message: MessageParam, offset = 0): NewRecord {
    return { type: 'message', index: this.messages.length + offset, stepId: this.stepId, message };
  }

  async putResult(block: ToolResultBlock): Promise<string> {
    const bytes = new TextEncoder().encode(JSON.stringify(block));
    return guardStore(() => this.deps.store.putBlob(bytes));
  }

  async recordedResult(resultRef: string): Promise<ToolResultBlock> {
    const bytes = await guardStore(() => this.deps.store.getBlob(resultRef));
    return ToolResultBlock.parse(JSON.parse(new TextDecoder().decode(bytes)));
  }

  private apply(record: StoredRecord): void {
    switch (record.type) {
      case 'message':
        this.messages.length = record.index;
        this.messages.push(record.message);
        return;
      case 'compaction':
        this.messages.length = 0;
        return;
      case 'ledger':
        this.ledger.set(record.entry.callId, record.entry);
        return;
      case 'approval':
        this.approvals.add(record);
        return;
      case 'patch':
        this.patchCount += 1;
        this.patchesByCall.set(`${record.patch.toolCallId}\0${record.patch.path}`, record.patch.patchId);
        return;
      case 'budget':
        this.budget = { ...record.budget };
        return;
      case 'checkpoint':
      case 'status':
      case 'run_end':
        this.status = record.status;
        return;
      default:
        return;
    }
  }

  private announce(record: StoredRecord): void {
    if (record.type === 'checkpoint') this.emit({ type: 'checkpoint', runId: this.runId, checkpoint: record });
    else if (record.type === 'ledger') this.emit({ type: 'ledger', runId: this.runId, entry: record.entry });
    else if (record.type === 'status')
      this.emit({
        type: 'status',
        runId: this.runId,
        status: record.status,
        ...(record.reason !== undefined ? { reason: record.reason } : {}),
      });
    else if (record.type === 'run_end')
      this.emit({
        type: 'status',
        runId: this.runId,
        status: record.status,
        ...(record.summary !== undefined ? { reason: record.summary } : {}),
      });
  }
}

function budgetIn(records: readonly NewRecord[]): Budget | undefined {
  const record = [...records].reverse().find((r) => r.type === 'budget');
  return record?.type === 'budget' ? record.budget : undefined;
}

export function initialBudgetOf(run: Pick<RunRecord, 'settings'>): Budget {
  const budget: Budget = { turns: 0, maxTurns: run.settings.maxTurns, inputTokens: 0, outputTokens: 0, tokensUsed: 0, costUsd: 0 };
  if (run.settings.maxTokens !== undefined) budget.maxTokens = run.settings.maxTokens;
  if (run.settings.maxCostUsd !== undefined) budget.maxCostUsd = run.settings.maxCostUsd;
  return budget;
}
