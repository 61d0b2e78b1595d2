import type { FailureAction } from '../../../words/failure-words';
import type * as vscode from 'vscode';
import type { LiveState, Patch } from '../../../core/patches/schema';
import type { RunState, RunSummary } from '../../../core/store/contract';
import type { RunEvent, StreamChunk } from '../window/run-model';
import type { ApprovalChoice, ContextChip, PendingApproval } from '../../../protocol/messages';
import type { RestoreFile, RestoreMode } from '../../../protocol/viewModel';

/** What changed, so the Timeline re-reads only that: the window's run model's events. */
export type TimelineChange = RunEvent;
export type { StreamChunk };

/** What a restore does (dry run) or did, per file the agent wrote. */
export interface RestorePlan {
  /** Conflicts first. */
  readonly files: readonly RestoreFile[];
  /** Messages a session restore takes out of the active history. */
  readonly messagesDropped?: number;
  /** A restore of the conversation (or both) went on in this fork; the run itself stays as it was. */
  readonly forkRunId?: string;
}

export interface RollbackResult {
  readonly revertedHunks: number;
  /** Hunks that do not apply to the live content: left alone. */
  readonly conflictHunks: number;
}

/**
 * Everything the Timeline needs from the rest of the extension. The host implements it over
 * the store, the restore engine and the runtime; the Timeline never touches core directly.
 * Every action rejects with an Error whose message is shown to the person as is.
 */
export interface TimelineBackend {
  readonly onDidChange: vscode.Event<TimelineChange>;
  /** The window's selected run changed (a pick, a run started or forked here). */
  readonly onDidSelect: vscode.Event<string | undefined>;
  /** The window's selected run: the one the tree, the conversation and the composer follow. */
  selectedRun(): string | undefined;
  select(runId: string): void;
  listRuns(): Promise<readonly RunSummary[]>;
  readRun(runId: string): Promise<RunState>;
  /** Live state of each of these pending patches (by patchId), from live buffers. */
  liveStates(patches: readonly Patch[]): Promise<ReadonlyMap<string, LiveState>>;
  /** Bytes of a content blob (a patch's beforeBlob). */
  readBlob(hash: string): Promise<Uint8Array>;
  /** The live file of a workspace-relative path, or undefined when outside every folder. */
  fileUri(path: string): vscode.Uri | undefined;
  /** With dryRun: what would happen, nothing written. Without: does it (recording what it replaces first). */
  restoreCheckpoint(runId: string, checkpointId: string, mode: RestoreMode, options: { dryRun: boolean }): Promise<RestorePlan>;
  accept(runId: string, patchId: string): Promise<void>;
  /** Whole patch, or one hunk (index in the patch's unified diff, as `diff.parsePatch` numbers them). */
  rollbackPatch(runId: string, patchId: string, hunk?: number): Promise<RollbackResult>;
  /** Undoes the run's latest restore or rollback that is not undone yet. */
  undoLastRestore(runId: string): Promise<RestorePlan>;
  /** A fork of the run from the start of `step` (files kept); returns the fork's run id. */
  fork(runId: string, step: number): Promise<string>;
  /** Resumes the run (a run at its limit asks for the new one first); says what it did. */
  resume(runId: string): Promise<string>;
  /** Takes a run over from another window (after the person confirms); false when they did not. */
  takeOver(runId: string): Promise<boolean>;
  cancel(runId: string): Promise<void>;
  /** Runs the action beside a run's failure (words/failure-words); says what it did. */
  failureAction(runId: string, action: FailureAction): Promise<string>;
  /** True when a new run would use Anthropic and no key is set: the view then asks for one. Optional: without it, nothing is asked. */
  keyMissing?(): Promise<boolean>;
  /** The key or the provider setting changed: keyMissing may answer otherwise. */
  readonly onDidChangeKey?: vscode.Event<void>;
  /** Runs "Agent: Set API Key"; says what it did. */
  setApiKey?(): Promise<string>;
}

/** The conversation part of the Timeline: streamed text, inline approvals, the composer, links. */
export interface ConversationBackend {
  readonly onDidStream: vscode.Event<StreamChunk>;
  /** The calls waiting for a decision changed. */
  readonly onDidChangeApprovals: vscode.Event<void>;
  pendingApprovals(): readonly PendingApproval[];
  /** Settles a waiting call; false when it no longer waits (decided elsewhere, or the run stopped). */
  decide(runId: string, callId: string, decision: ApprovalChoice, reason?: string): boolean;
  /** Starts a run with the task and its context; resolves once it is started. */
  startRun(task: string, context: readonly ContextChip[]): Promise<string>;
  /** Gives a stopped run a new instruction and runs it again; says what changed (a raised limit). */
  continueRun(runId: string, instruction: string): Promise<string>;
  /** Asks the agent, in a new instruction, to undo these calls' external effects (its calls go through approvals); says what it did. */
  undoEffects?(runId: string, callIds: readonly string[]): Promise<string>;
  /** Allows hosts the commands' network proxy refused, for this workspace; says what it did. */
  allowHosts?(hosts: readonly string[]): Promise<string>;
  pickContext(kind: ContextChip['kind']): Promise<ContextChip[]>;
  /** Opens a workspace file in the editor at a 1-based line (a problem row); refuses a path outside the workspace. */
  openProblem?(path: string, line: number): Promise<void>;
  /** Opens a link from the model's text once the person confirms; false when they did not. */
  openLink(url: string): Promise<boolean>;
  copyText(text: string): Promise<void>;
  /** Brings the Timeline into view (a run started, an approval waits). */
  readonly onDidRequestReveal: vscode.Event<void>;
}
