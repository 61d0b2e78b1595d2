import type * as vscode from 'vscode';
import type { RollbackResult } from '../../../core/restore/rollback';
import { undoSummary } from '../../../core/restore/undo';
import type { RestoreWhat } from './restore-actions';
import type { RunSummary } from '../../../core/store/contract';
import { readRunFacts } from '../window/context-keys';
import { runItem } from '../run/run-commands';
import type { Services } from '../window/services';
import { errorText } from '../../../core/error-text';

async function pickRun(s: Services, runs: readonly RunSummary[], title: string): Promise<string | undefined> {
  const available = runs.filter((r) => !s.controller.isRunning(r.runId));
  if (available.length === 0) {
    void s.prompts.message('info', `${title}: there is no run to choose (a running run must be cancelled first).`, {});
    return undefined;
  }
  if (available.length === 1) return available[0]!.runId;
  return (
    await s.prompts.quickPick(
      available.map((run) => runItem(run, runs)),
      { title, placeHolder: 'Which run?' },
    )
  )?.runId;
}

function summarizeFiles(result: RollbackResult): string {
  const conflicts = result.plan.files.filter((f) => f.status === 'conflict').map((f) => f.path);
  const parts = [result.written.length > 0 ? `restored ${result.written.join(', ')}` : 'no file needed writing'];
  if (conflicts.length > 0) parts.push(`left alone (you changed them since): ${conflicts.join(', ')}`);
  if (result.failed.length > 0) parts.push(`failed: ${result.failed.map((f) => `${f.path} (${f.error})`).join(', ')}`);
  return parts.join('; ');
}

async function guarded(s: Services, title: string, work: () => Promise<string | undefined>): Promise<void> {
  try {
    const summary = await work();
    if (summary !== undefined) {
      s.log.log('info', `${title}: ${summary}`);
      void s.prompts.message('info', `${title}: ${summary}`, {});
    }
  } catch (error) {
    s.log.log('error', `${title}: ${errorText(error)}`);
    void s.prompts.message('error', `${title}: ${errorText(error)}`, {});
  } finally {
    void s.keys.refresh();
  }
}

interface WhatChoice extends vscode.QuickPickItem {
  readonly what: RestoreWhat;
}

const WHAT_CHOICES: readonly WhatChoice[] = [
  {
    label: 'Files',
    description: 'roll back the files the agent changed after this checkpoint (your later edits are kept hunk by hunk)',
    what: 'files',
  },
  { label: 'Conversation', description: 'a new run (a fork) from this checkpoint; files are not touched, this run stays', what: 'session' },
  { label: 'Files and conversation', description: 'roll back the files, and a fork from this checkpoint', what: 'both' },
];

export async function restoreCheckpoint(s: Services, arg?: { runId?: string; checkpointId?: string; what?: RestoreWhat }): Promise<void> {
  await guarded(s, 'Agent: Restore Checkpoint', async () => {
    const runId = arg?.runId ?? (await pickRun(s, (await readRunFacts(s.model)).runs, 'Agent: Restore Checkpoint'));
    if (runId === undefined) return undefined;
    let checkpointId = arg?.checkpointId;
    if (checkpointId === undefined) {
      const state = await s.store.readRun(runId);
      const items = [...state.checkpoints].reverse().map((c) => ({
        label: `step ${c.stepId} · ${c.label}`,
        description: new Date(c.at).toLocaleTimeString(),
        detail: c.checkpointId,
        checkpointId: c.checkpointId,
      }));
      checkpointId = (await s.prompts.quickPick(items, { title: 'Agent: Restore Checkpoint', placeHolder: 'Checkpoints, newest first' }))
        ?.checkpointId;
      if (checkpointId === undefined) return undefined;
    }
    const what =
      arg?.what ?? (await s.prompts.quickPick(WHAT_CHOICES, { title: 'Agent: Restore Checkpoint', placeHolder: 'What to restore' }))?.what;
    if (what === undefined) return undefined;
    const result = await s.restore.restoreCheckpoint(runId, checkpointId, what);
    const parts = [
      result.files ? `${summarizeFiles(result.files)} ("Agent: Undo Last Restore" brings them back)` : undefined,
      result.fork ? `the conversation goes on in a new run, ${result.fork.runId} (a fork; run ${runId} stays as it was)` : undefined,
    ];
    return `${parts.filter((p) => p !== undefined).join('; ')}.`;
  });
}

const FORCE = 'Roll back anyway';

export async function rollbackPatch(s: Services, arg?: { runId?: string; patchId?: string }): Promise<void> {
  await guarded(s, 'Agent: Roll Back Patch', async () => {
    const runId = arg?.runId ?? (await pickRun(s, (await readRunFacts(s.model)).withPendingPatches, 'Agent: Roll Back Patch'));
    if (runId === undefined) return undefined;
    let patchId = arg?.patchId;
    if (patchId === undefined) {
      const state = await s.store.readRun(runId);
      const items = [...state.patches]
        .reverse()
        .filter((p) => p.state === 'pending')
        .map((p) => ({
          label: p.path,
          description: `${p.op} +${p.added} -${p.removed} · step ${p.stepId}`,
          detail: p.patchId,
          patchId: p.patchId,
        }));
      patchId = (await s.prompts.quickPick(items, { title: 'Agent: Roll Back Patch', placeHolder: 'Pending patches, newest first' }))
        ?.patchId;
      if (patchId === undefined) return undefined;
    }
    const target = { kind: 'patch' as const, patchId };
    const plan = await s.restore.planRollback(runId, target);
    const conflicts = plan.files.filter((f) => f.status === 'conflict');
    let force = false;
    if (conflicts.length > 0) {
      const detail = conflicts.map((f) => `${f.path}: ${f.reason ?? 'changed since'}`).join('\n');
      const choice = await s.prompts.message(
        'warning',
        'Some of this patch no longer applies: you changed those lines since. Roll back anyway? (Your current content is kept for "Undo Last Restore".)',
        { modal: true, detail },
        FORCE,
      );
      if (choice !== FORCE) return undefined;
      force = true;
    }
    return summarizeFiles(await s.restore.rollback(runId, target, { force }));
  });
}

export async function undoLastRestore(s: Services, arg?: { runId?: string }): Promise<void> {
  await guarded(s, 'Agent: Undo Last Restore', async () => {
    const runId = arg?.runId ?? (await pickRun(s, (await readRunFacts(s.model)).withUndoableRestore, 'Agent: Undo Last Restore'));
    if (runId === undefined) return undefined;
    return undoSummary(await s.restore.undoLastRestore(runId));
  });
}
