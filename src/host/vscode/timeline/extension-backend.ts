import type { FailureAction } from '../../../words/failure-words';
import { runFailureAction } from '../run/outcome';
import * as vscode from 'vscode';
import { API_KEY_SECRET } from '../window/api-key';
import { COMMANDS } from '../run/run-commands';
import { readOneSetting } from '../window/settings';
import { classifyPatch, holdsExec } from '../../../core/patches/classify';
import { liveExec } from '../../../core/patches/exec-bit';
import type { LiveState, Patch } from '../../../core/patches/schema';
import type { LiveFile } from '../../../core/ports';
import type { RunSummary } from '../../../core/store/contract';
import type { RollbackResult as CoreRollbackResult } from '../../../core/restore/rollback';
import type { FileRollbackPlan } from '../../../core/restore/types';
import type { RestoreFile, RestoreMode } from '../../../protocol/viewModel';
import { sortRestoreFiles } from '../../../protocol/viewModel';
import type { RestorePlan, RollbackResult, TimelineBackend, TimelineChange } from './backend';
import type { Services } from '../window/services';
import { RunBusyError } from '../restore/restore-actions';
import { fileUriOf } from '../window/workspace-path';
import { RESTRICTED_MODE_MESSAGE } from '../window/trust';
import { LIMIT_LEFT, raiseBeforeResume, raiseDepsOf } from '../run/raise-limit';

export const TAKE_OVER = 'Take Over';
const TAKE_OVER_DETAIL =
  "The other window's run stops writing at its next step (its writes are refused from now on) and this window resumes the run from its last checkpoint. A call the other window had started is checked first, as after a crash: nothing is run twice without asking.";

function takeOverQuestion(run: RunSummary): string {
  const who = run.holder ? ` (pid ${run.holder.pid} on ${run.holder.hostname})` : '';
  const ago = Math.max(0, Math.round((Date.now() - run.updatedAt) / 60_000));
  return `Take over this run from another window${who}? Its last progress was ${ago < 1 ? 'under a minute' : `${ago} min`} ago.`;
}

function restoreFileOf(file: FileRollbackPlan): RestoreFile {
  return { path: file.path, action: file.status, ...(file.reason !== undefined ? { detail: file.reason } : {}) };
}

function hunkCounts(result: CoreRollbackResult): RollbackResult {
  const hunks = result.plan.files.flatMap((f) => f.patches.flatMap((p) => p.hunks));
  const reverted = result.written.length > 0 ? hunks.filter((h) => h === 'revert').length : 0;
  return { revertedHunks: reverted, conflictHunks: hunks.filter((h) => h === 'conflict').length };
}

/**
 * The Timeline's view of the extension: runs from the window's run model, live patch states from
 * the live workspace, actions through the restore engine and the controller. Its change events
 * are the run model's (which owns every input: writers, store notices, live changes).
 */
export class ExtensionTimelineBackend implements TimelineBackend {
  readonly onDidChange: vscode.Event<TimelineChange>;
  readonly onDidSelect: vscode.Event<string | undefined>;
  readonly onDidChangeKey: vscode.Event<void>;

  constructor(private readonly s: Services) {
    this.onDidChange = s.model.onDidChange;
    this.onDidSelect = s.model.onDidSelect;
    const key = new vscode.EventEmitter<void>();
    s.context.subscriptions.push(
      key,
      s.context.secrets.onDidChange((e) => e.key === API_KEY_SECRET && key.fire()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('agentCheckpoints.provider') && key.fire()),
    );
    this.onDidChangeKey = key.event;
  }

  async keyMissing(): Promise<boolean> {
    return readOneSetting('provider').value === 'anthropic' && (await this.s.apiKeys.get()) === undefined;
  }

  async setApiKey(): Promise<string> {
    await vscode.commands.executeCommand(COMMANDS.setApiKey);
    return (await this.keyMissing()) ? 'No API key was set.' : 'API key set: describe a task below to start.';
  }

  selectedRun(): string | undefined {
    return this.s.model.selected;
  }

  select(runId: string): void {
    this.s.model.select(runId);
  }

  listRuns() {
    return this.s.model.listRuns();
  }

  /** A damaged journal reads as its intact part, marked damaged (the timeline shows it read-only). */
  readRun(runId: string) {
    return this.s.store.readRun(runId, { intactPart: true });
  }

  async liveStates(patches: readonly Patch[]): Promise<ReadonlyMap<string, LiveState>> {
    const live = new Map<string, LiveFile | null>();
    const bits = new Map<string, boolean | null | undefined>();
    const states = new Map<string, LiveState>();
    for (const patch of patches) {
      if (patch.state !== 'pending') continue;
      if (!live.has(patch.path)) live.set(patch.path, await this.s.workspace.read(patch.path).catch(() => null));
      // The bit is read once per file, and only for a file a patch of which changes it.
      if (holdsExec(patch) && !bits.has(patch.path))
        bits.set(patch.path, await liveExec(this.s.workspace, patch.path).catch(() => undefined));
      states.set(patch.patchId, classifyPatch(patch, live.get(patch.path) ?? null, bits.get(patch.path)));
    }
    return states;
  }

  readBlob(hash: string): Promise<Uint8Array> {
    return this.s.store.getBlob(hash);
  }

  /** The file a workspace path names, by the same path rules as the agent's (never a folder itself or outside one). */
  fileUri(path: string): vscode.Uri | undefined {
    return fileUriOf(this.s.workspace.paths, path);
  }

  async restoreCheckpoint(runId: string, checkpointId: string, mode: RestoreMode, options: { dryRun: boolean }): Promise<RestorePlan> {
    const state = await this.s.store.readRun(runId);
    const checkpoint = state.allCheckpoints.find((c) => c.checkpointId === checkpointId);
    if (!checkpoint) throw new Error(`run ${runId} has no checkpoint ${checkpointId}`);
    const messagesDropped = mode === 'files' ? undefined : Math.max(0, state.messages.length - checkpoint.messageCount);
    const withDropped = (files: RestoreFile[]): RestorePlan => ({
      files: sortRestoreFiles(files),
      ...(messagesDropped !== undefined ? { messagesDropped } : {}),
    });
    if (options.dryRun) {
      if (mode === 'session') return withDropped([]);
      const plan = await this.s.restore.planRollback(runId, { kind: 'checkpoint', checkpointId });
      return withDropped(plan.files.map(restoreFileOf));
    }
    const result = await this.s.restore.restoreCheckpoint(runId, checkpointId, mode);
    const plan = withDropped(result.files ? result.files.plan.files.map(restoreFileOf) : []);
    return result.fork ? { ...plan, forkRunId: result.fork.runId } : plan;
  }

  /** The light path of a decision: the run model brings the record to every view. */
  async accept(runId: string, patchId: string): Promise<void> {
    if (this.s.controller.isRunning(runId)) throw new RunBusyError(runId);
    await this.s.model.appendDecisions(runId, [{ type: 'patch_state', patchId, state: 'accepted', reason: 'accepted by the user' }]);
  }

  async rollbackPatch(runId: string, patchId: string, hunk?: number): Promise<RollbackResult> {
    const target = hunk === undefined ? { kind: 'patch' as const, patchId } : { kind: 'hunk' as const, patchId, hunkIndex: hunk };
    const result = await this.s.restore.rollback(runId, target);
    return hunkCounts(result);
  }

  async undoLastRestore(runId: string): Promise<RestorePlan> {
    const result = await this.s.restore.undoLastRestore(runId);
    if (!result) throw new Error('this run has no restore or rollback left to undo');
    const written: RestoreFile[] = result.written.map((path) => ({ path, action: 'revert' }));
    const conflicts: RestoreFile[] = result.conflicts.map((c) => ({ path: c.path, action: 'conflict', detail: c.error }));
    return { files: sortRestoreFiles([...written, ...conflicts]) };
  }

  async fork(runId: string, step: number): Promise<string> {
    const { fork } = await this.s.restore.fork(runId, { step }, 'keep');
    return fork.runId;
  }

  /** Resumes the run; one at its limit asks for the new limit first ("Raise to…"). Says what it did. */
  async resume(runId: string): Promise<string> {
    if (!this.s.isTrusted()) throw new Error(RESTRICTED_MODE_MESSAGE);
    const raise = await raiseBeforeResume(raiseDepsOf(this.s), runId);
    if (raise === null) return LIMIT_LEFT;
    await this.s.controller.resume(runId, raise ? { raise } : {});
    return raise ? 'Run resumed with the higher limit.' : 'Run resumed.';
  }

  /** Asks, then fences the other window's writer and resumes here; a holder that is gone is taken over without asking. */
  async takeOver(runId: string): Promise<boolean> {
    if (!this.s.isTrusted()) throw new Error(RESTRICTED_MODE_MESSAGE);
    const summary = (await this.s.store.listRuns()).find((r) => r.runId === runId);
    if (!summary) throw new Error(`run ${runId} is not in this workspace's store`);
    if (summary.leased && summary.heldHere !== true) {
      const choice = await this.s.prompts.message(
        'warning',
        takeOverQuestion(summary),
        { modal: true, detail: TAKE_OVER_DETAIL },
        TAKE_OVER,
      );
      if (choice !== TAKE_OVER) return false;
    }
    await this.s.controller.resume(runId, { takeOver: true });
    return true;
  }

  async failureAction(runId: string, action: FailureAction): Promise<string> {
    if (action !== 'show_log' && action !== 'set_key' && !this.s.isTrusted()) throw new Error(RESTRICTED_MODE_MESSAGE);
    return runFailureAction(this.s, runId, action);
  }

  async cancel(runId: string): Promise<void> {
    if (!this.s.controller.isRunning(runId)) throw new Error(`run ${runId} is not running in this window`);
    this.s.controller.cancel();
  }
}
