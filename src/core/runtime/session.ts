import type { LedgerEntry } from '../ledger/schema';
import type { Patch } from '../patches/schema';
import { MessageParam, ToolResultBlock } from '../model/messages';
import type { RunWriter } from '../store/contract';
import { foldFromResumeState, foldRecord, startFold, type FoldState } from '../store/fold';
import {
  FORMAT_VERSION,
  type ApprovalRecord,
  type Budget,
  type CheckpointLabel,
  type NewRecord,
  type RunRecord,
  type RunStatus,
  type StoredRecord,
} from '../store/records';
import type { Plan } from '../store/plan';
import type { ResumeState } from '../store/resume-state';
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
 * a commit group is on disk (write-ahead), by the store's one fold (fold.ts).
 */
export class RunSession {
  private readonly fold: FoldState;
  private approvalBook = new ApprovalBook();
  private approvalsFolded = 0;
  /** The last commit group in flight: calls of one answer that run at once append one group at a time, each checkpoint numbered after the one before. */
  private commitTail: Promise<unknown> = Promise.resolve();
  /** The step being worked on: the loop moves it on before the step's first record. */
  stepId: number;
  lastStopReason: string | undefined;
  /** Whether this session already said that the API left out thinking blocks (said once). */
  thinkingDropSaid = false;
  /** Whether this session already said that the host has no language service (said once, with a write's result). */
  noLanguageServiceSaid = false;
  /** Calls a restore went back over (a fork made before them): asked before they run again, whatever was allowed. */
  restoredCalls: ReadonlySet<string> = new Set();

  constructor(
    readonly deps: RuntimeDeps,
    readonly writer: RunWriter,
    readonly run: RunInfo,
    readonly emit: RuntimeListener,
    state?: ResumeState,
  ) {
    // The store parsed the messages with the same schema normaliseMessage uses: they are what was sent.
    this.fold = state ? foldFromResumeState(state) : startFold({ ...run, type: 'run', v: FORMAT_VERSION, at: run.createdAt, seq: 1 });
    this.stepId = state?.stepId ?? 0;
    this.lastStopReason = state?.lastStopReason;
  }

  get messages(): readonly MessageParam[] {
    return this.fold.messages;
  }

  /** Latest entry per call, in planning order. */
  get ledger(): ReadonlyMap<string, LedgerEntry> {
    return this.fold.ledger;
  }

  get budget(): Budget {
    return this.fold.budget;
  }

  /** The model's plan (its latest succeeded update_plan call: store/plan.ts). */
  get plan(): Plan | undefined {
    return this.fold.plan;
  }

  /** The calls the latest instruction asked the agent to undo, if it did. */
  get undoing(): readonly string[] | undefined {
    return this.fold.undoing;
  }

  get status(): RunStatus {
    return this.fold.status;
  }

  get approvals(): ApprovalBook {
    const { approvals } = this.fold;
    for (; this.approvalsFolded < approvals.length; this.approvalsFolded++) this.approvalBook.add(approvals[this.approvalsFolded]!);
    return this.approvalBook;
  }

  /** A patch of the run by id, when the run's state holds it. */
  patchById(patchId: string): Patch | undefined {
    return this.fold.patches.get(patchId);
  }

  /** The patch a call recorded for a path, if any. */
  patchOf(callId: string, path: string): string | undefined {
    let found: string | undefined;
    for (const patch of this.fold.patches.values()) if (patch.toolCallId === callId && patch.path === path) found = patch.patchId;
    return found;
  }

  get runId(): string {
    return this.run.runId;
  }

  checkpoint(
    label: CheckpointLabel,
    pending: readonly NewRecord[],
    extra: { callId?: string; status?: RunStatus; stopReason?: string } = {},
  ): NewCheckpoint {
    return {
      type: 'checkpoint',
      checkpointId: `c${this.fold.checkpointCount + 1}`,
      stepId: this.stepId,
      label,
      // A compaction's messages are the whole history from index 0.
      messageCount:
        (pending.some((r) => r.type === 'compaction') ? 0 : this.messages.length) + pending.filter((r) => r.type === 'message').length,
      patchCount: this.fold.patchCount + pending.filter((r) => r.type === 'patch').length,
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
    await this.inTurn(() => this.append([...records, this.checkpoint(label, records, extra)]));
  }

  async commit(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    return this.inTurn(() => this.append(records));
  }

  /** Runs one commit group after those already in flight (a failed one does not stop the next). */
  private inTurn<T>(group: () => Promise<T>): Promise<T> {
    const run = this.commitTail.then(group);
    this.commitTail = run.catch(() => undefined);
    return run;
  }

  private async append(records: readonly NewRecord[]): Promise<readonly StoredRecord[]> {
    const stored = await guardStore(() => this.writer.append(records));
    for (const record of stored) foldRecord(this.fold, record);
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
