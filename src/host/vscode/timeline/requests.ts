import type { RunState } from '../../../core/store/contract';
import { effectOf } from './view-build';
import { compensationLinks } from './view-words';
import type { ReplyMessage, RequestMessage, RestoreOutcome } from '../../../protocol/messages';
import { sortRestoreFiles, type RestoreMode, type RestorePreview } from '../../../protocol/viewModel';
import type { ConversationBackend, RestorePlan, TimelineBackend } from './backend';
import { cap, counted, describeCall } from '../../../words/words';
import { INPUT_TEXT_MAX, RESULT_MAX } from './view-history';
import { errorText } from '../../../core/error-text';
import { finderOf, runTitle } from '../../../words/run-title';
import { declaredUndo, effectsToUndo } from '../../../core/restore/compensation';

export interface RequestDeps {
  readonly backend: TimelineBackend;
  readonly conversation: ConversationBackend;
  state(runId: string): Promise<RunState>;
  openDiff(runId: string, patchId: string): Promise<void>;
  /** Opens the comparison of two branches in the editor; says what it found. */
  compare?(runId: string, otherRunId: string): Promise<string>;
  /** A fresh unguessable id. */
  newId(): string;
}

interface IssuedPreview {
  readonly runId: string;
  readonly checkpointId: string;
  readonly mode: RestoreMode;
  readonly files: string;
}

const MAX_PREVIEWS = 20;

const DECIDED = { allow_once: 'Allowed once.', allow_for_run: 'Allowed for this run.', deny: 'Denied.' } as const;

/** Calls after the checkpoint with effects outside the files: a restore leaves them as they are. */
export function externalEffectsAfter(state: RunState, checkpointId: string): RestorePreview['externalEffects'] {
  const checkpoint = state.allCheckpoints.find((c) => c.checkpointId === checkpointId);
  if (!checkpoint) return [];
  const found = state.ledger
    .filter((e) => (e.startedAt ?? e.plannedAt) >= checkpoint.at && e.status !== 'planned' && e.status !== 'approved')
    .flatMap((e) => {
      const effect = effectOf(e);
      return effect ? [{ callId: e.callId, toolName: e.toolName, effect }] : [];
    });
  const facts = effectsToUndo(
    state,
    found.map((f) => f.callId),
  );
  const links = compensationLinks(state.ledger);
  return found.map((item, i) => {
    const { input, result } = facts[i]!;
    const undo = declaredUndo(facts[i]!);
    const { undoes, undoneBy } = links.get(item.callId) ?? {};
    const call = { toolName: item.toolName, input, added: 0, removed: 0, hasPatches: false, denied: false };
    return {
      ...item,
      label: describeCall(result !== undefined ? { ...call, result } : call),
      ...(undoes ? { undoes } : {}),
      ...(undoneBy ? { undoneBy } : {}),
      ...(input !== undefined ? { input: cap(JSON.stringify(input) ?? '', INPUT_TEXT_MAX) } : {}),
      ...(result !== undefined ? { result: cap(result, RESULT_MAX) } : {}),
      ...(undo !== undefined ? { undo } : {}),
    };
  });
}

function filesKey(plan: RestorePlan): string {
  return JSON.stringify(sortRestoreFiles(plan.files).map((f) => [f.path, f.action]));
}

function summarize(plan: RestorePlan, verb: string): string {
  const count = (action: string) => plan.files.filter((f) => f.action === action).length;
  const reverted = count('revert');
  const conflicts = count('conflict');
  const parts = [`${verb} ${reverted} file${reverted === 1 ? '' : 's'}`];
  if (conflicts > 0) parts.push(`${conflicts} in conflict left as they are`);
  if (plan.messagesDropped) parts.push(`conversation back ${counted(plan.messagesDropped, 'message')}`);
  return `${parts.join('; ')}.`;
}

function outcome(plan: RestorePlan, verb: string): RestoreOutcome {
  return { message: summarize(plan, verb), files: sortRestoreFiles(plan.files) };
}

/**
 * Answers webview requests through the backend. A restore runs only with the id of a preview
 * this handler issued for the same checkpoint and mode, and only if a fresh dry run still
 * says the same for every file; otherwise the person is asked to look again.
 */
export class RequestHandler {
  private readonly previews = new Map<string, IssuedPreview>();

  constructor(private readonly deps: RequestDeps) {}

  async handle(request: RequestMessage): Promise<ReplyMessage> {
    try {
      const result = await this.dispatch(request);
      return { type: 'reply', requestId: request.requestId, ok: true, result };
    } catch (error) {
      return { type: 'reply', requestId: request.requestId, ok: false, error: errorText(error) };
    }
  }

  private async dispatch(request: RequestMessage): Promise<unknown> {
    const { backend } = this.deps;
    switch (request.method) {
      case 'restorePreview':
        return this.preview(request.params.runId, request.params.checkpointId, request.params.mode);
      case 'restore':
        return this.restore(request.params);
      case 'openDiff':
        await this.deps.openDiff(request.params.runId, request.params.patchId);
        return { message: 'Diff opened.' };
      case 'accept':
        await backend.accept(request.params.runId, request.params.patchId);
        return { message: 'Patch accepted.' };
      case 'rollbackPatch': {
        const result = await backend.rollbackPatch(request.params.runId, request.params.patchId, request.params.hunk);
        const conflicts = result.conflictHunks > 0 ? `; ${counted(result.conflictHunks, 'hunk')} in conflict left as they are` : '';
        return { ...result, message: `Rolled back ${counted(result.revertedHunks, 'hunk')}${conflicts}.` };
      }
      case 'undoLastRestore':
        return outcome(await backend.undoLastRestore(request.params.runId), 'Undo put back');
      case 'fork': {
        const runId = await backend.fork(request.params.runId, request.params.step);
        return {
          runId,
          message: `Forked from the start of step ${request.params.step}: "${await this.titleOf(runId)}" is selected; give it an instruction or resume it.`,
        };
      }
      case 'compare': {
        if (!this.deps.compare) throw new Error('Comparing branches is not available here.');
        return { message: await this.deps.compare(request.params.runId, request.params.otherRunId) };
      }
      case 'select':
        backend.select(request.params.runId);
        return { message: '' };
      case 'resume':
        return { message: await backend.resume(request.params.runId) };
      case 'takeOver':
        return {
          message: (await backend.takeOver(request.params.runId)) ? 'Run taken over: it continues in this window.' : 'Not taken over.',
        };
      case 'cancel':
        await backend.cancel(request.params.runId);
        return { message: 'Run cancelled.' };
      case 'failureAction':
        return { message: await backend.failureAction(request.params.runId, request.params.action) };
      case 'setApiKey':
        if (!backend.setApiKey) throw new Error('Setting the API key is not available here.');
        return { message: await backend.setApiKey() };
      default:
        return this.converse(request);
    }
  }

  /** The conversation's requests: links, copies, decisions, the composer. */
  private async converse(request: RequestMessage): Promise<unknown> {
    const { conversation } = this.deps;
    switch (request.method) {
      case 'openLink':
        return { message: (await conversation.openLink(request.params.url)) ? 'Link opened.' : 'Link not opened.' };
      case 'openProblem': {
        if (!conversation.openProblem) throw new Error('Opening a problem is not available here.');
        const { path, line } = request.params;
        await conversation.openProblem(path, line);
        return { message: `Opened ${path}:${line}.` };
      }
      case 'copyText':
        await conversation.copyText(request.params.text);
        return { message: 'Copied to the clipboard.' };
      case 'decide': {
        const { runId, callId, decision, reason } = request.params;
        if (!conversation.decide(runId, callId, decision, reason)) throw new Error('This call no longer waits for a decision.');
        return { message: DECIDED[decision] };
      }
      case 'pickContext':
        return { chips: await conversation.pickContext(request.params.kind) };
      case 'startRun':
        await conversation.startRun(request.params.task, request.params.context);
        return { message: 'Run started.' };
      case 'continueRun':
        return { message: await conversation.continueRun(request.params.runId, request.params.instruction) };
      case 'allowHosts':
        if (!conversation.allowHosts) throw new Error('Allowing hosts is not available here.');
        return { message: await conversation.allowHosts(request.params.hosts) };
      case 'undoEffects':
        if (!conversation.undoEffects) throw new Error('Undoing external effects is not available here.');
        return { message: await conversation.undoEffects(request.params.runId, request.params.callIds) };
      default:
        throw new Error(`unknown request ${request.method}`);
    }
  }

  async preview(runId: string, checkpointId: string, mode: RestoreMode): Promise<RestorePreview> {
    const plan = await this.deps.backend.restoreCheckpoint(runId, checkpointId, mode, { dryRun: true });
    const previewId = this.deps.newId();
    this.previews.set(previewId, { runId, checkpointId, mode, files: filesKey(plan) });
    while (this.previews.size > MAX_PREVIEWS) this.previews.delete(this.previews.keys().next().value!);
    const preview: RestorePreview = {
      runId,
      checkpointId,
      mode,
      files: sortRestoreFiles(plan.files),
      externalEffects: externalEffectsAfter(await this.deps.state(runId), checkpointId),
      previewId,
    };
    if (plan.messagesDropped !== undefined) preview.messagesDropped = plan.messagesDropped;
    return preview;
  }

  /** A run's title as the run list shows it (words/run-title); its id when it is not listed. */
  private async titleOf(runId: string): Promise<string> {
    const runs = await this.deps.backend.listRuns().catch(() => []);
    const run = runs.find((r) => r.runId === runId);
    return run ? runTitle(run, finderOf(runs)) : `run ${runId}`;
  }

  private async restore(params: { runId: string; checkpointId: string; mode: RestoreMode; previewId: string }): Promise<RestoreOutcome> {
    const issued = this.previews.get(params.previewId);
    if (!issued || issued.runId !== params.runId || issued.checkpointId !== params.checkpointId || issued.mode !== params.mode) {
      throw new Error('This restore was not previewed: open the preview again.');
    }
    this.previews.delete(params.previewId);
    const fresh = await this.deps.backend.restoreCheckpoint(params.runId, params.checkpointId, params.mode, { dryRun: true });
    if (filesKey(fresh) !== issued.files) throw new Error('Files changed since the preview: nothing was restored. Open the preview again.');
    const done = await this.deps.backend.restoreCheckpoint(params.runId, params.checkpointId, params.mode, { dryRun: false });
    const restored = outcome(done, 'Restored');
    if (done.forkRunId === undefined) return restored;
    const fork = `The conversation goes on in a fork, "${await this.titleOf(done.forkRunId)}"; this run stays as it was.`;
    return { ...restored, message: params.mode === 'session' ? fork : `${restored.message} ${fork}` };
  }
}
