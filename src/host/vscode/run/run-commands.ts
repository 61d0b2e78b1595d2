import * as vscode from 'vscode';
import type { RuntimeEvent } from '../../../core/runtime';
import type { RunSummary } from '../../../core/store/contract';
import { NoApiKeyError, type ActiveRun } from './agent-controller';
import type { Services } from '../window/services';
import { LIMIT_LEFT, raiseBeforeResume, raiseDepsOf } from './raise-limit';
import { mayRunAgent } from '../window/trust';
import type { ResumeOptions } from '../../../core/runtime/resume';
import { errorText } from '../../../core/error-text';
import type { ContextChip } from '../../../protocol/messages';
import { taskWithContext } from './task-context';
import { workspacePathOf } from '../window/workspace-path';
import { TIMELINE_FOCUS, type CommandId } from '../commands/command-table';
import { finderOf, runTitle } from '../../../words/run-title';

export const COMMANDS = {
  run: 'agentCheckpoints.run',
  resume: 'agentCheckpoints.resume',
  cancel: 'agentCheckpoints.cancel',
  setApiKey: 'agentCheckpoints.setApiKey',
  showLog: 'agentCheckpoints.showLog',
  showTimeline: TIMELINE_FOCUS,
} as const satisfies Record<string, CommandId | typeof TIMELINE_FOCUS>;

const SET_API_KEY = 'Set API Key';
const SHOW_LOG = 'Show Log';

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  return new Date(ms).toLocaleString();
}

export function trustDeps(s: Services) {
  return {
    isTrusted: () => s.isTrusted(),
    prompts: s.prompts,
    manageTrust: () => vscode.commands.executeCommand('workbench.trust.manage'),
  };
}

interface ContextChoice extends vscode.QuickPickItem {
  readonly chip?: ContextChip;
}

/** The selection, or the active file, offered as context for the task. */
function contextChoices(s: Services, editor: vscode.TextEditor | undefined): ContextChoice[] {
  const choices: ContextChoice[] = [{ label: 'No extra context' }];
  const path = editor && workspacePathOf(s.workspace.paths, editor.document.uri);
  if (!editor || path === undefined) return choices;
  const selection = editor.selection;
  if (!selection.isEmpty) {
    const [startLine, endLine] = [selection.start.line + 1, selection.end.line + 1];
    choices.push({
      label: `Include the selection (${path}:${startLine}-${endLine})`,
      chip: { kind: 'selection', path, startLine, endLine },
    });
  }
  choices.push({ label: `Mention the active file (${path})`, chip: { kind: 'activeFile', path } });
  return choices;
}

async function askTask(s: Services): Promise<string | undefined> {
  const task = await s.prompts.inputBox({
    title: 'Agent: Run',
    prompt: 'What should the agent do?',
    placeHolder: 'e.g. add a test for parseConfig and make it pass',
    ignoreFocusOut: true,
  });
  if (task === undefined || task.trim() === '') return undefined;
  const editor = vscode.window.activeTextEditor;
  // The selection as it is now: the text goes with the task even if the editor changes meanwhile.
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : undefined;
  const choices = contextChoices(s, editor);
  if (choices.length === 1) return task.trim();
  const picked = await s.prompts.quickPick(choices, { title: 'Agent: Run', placeHolder: 'Context to give the agent with the task' });
  if (picked === undefined) return undefined;
  return taskWithContext(task, picked.chip ? [picked.chip] : [], async () => selected);
}

async function launch(s: Services, what: string, begin: () => Promise<ActiveRun>): Promise<{ runId: string } | undefined> {
  try {
    const run = await begin();
    void s.keys.refresh();
    return { runId: run.runId };
  } catch (error) {
    s.log.log('error', `${what}: ${errorText(error)}`);
    const actions = error instanceof NoApiKeyError ? [SET_API_KEY] : [SHOW_LOG];
    void s.prompts.message('error', `${what}: ${errorText(error)}`, {}, ...actions).then((choice) => {
      if (choice === SET_API_KEY) void vscode.commands.executeCommand(COMMANDS.setApiKey);
      if (choice === SHOW_LOG) s.channel.show(true);
    });
    return undefined;
  }
}

export async function runAgent(s: Services, arg?: { task?: string }): Promise<{ runId: string } | undefined> {
  if (!mayRunAgent(trustDeps(s), 'Agent: Run')) return undefined;
  if (s.controller.current) {
    void s.prompts.message('info', `A run is already in progress (${s.controller.current.runId}). Cancel it or wait for it to finish.`, {});
    return undefined;
  }
  const task = typeof arg?.task === 'string' && arg.task.trim() !== '' ? arg.task : await askTask(s);
  if (task === undefined) return undefined;
  return launch(s, 'Agent: Run', () => s.controller.start(task));
}

interface RunChoice extends vscode.QuickPickItem {
  readonly runId: string;
}

/** A run as a quick pick offers it, titled as the run list titles it (`runs`: the listing its parent is found in). */
export function runItem(run: RunSummary, runs: readonly RunSummary[]): RunChoice {
  return {
    label: runTitle(run, finderOf(runs)),
    description: `${run.status} · step ${run.steps} · ${ago(run.updatedAt)}`,
    detail: run.runId,
    runId: run.runId,
  };
}

export async function resumeRun(s: Services, arg?: { runId?: string; options?: ResumeOptions }): Promise<{ runId: string } | undefined> {
  if (!mayRunAgent(trustDeps(s), 'Agent: Resume')) return undefined;
  let runId = typeof arg?.runId === 'string' ? arg.runId : undefined;
  if (runId === undefined) {
    const runs = await s.controller.resumableRuns();
    if (runs.length === 0) {
      void s.prompts.message('info', 'There is no paused or interrupted run to resume.', {});
      return undefined;
    }
    const listed = await s.model.listRuns();
    const items = runs.map((run) => runItem(run, listed));
    runId = (await s.prompts.quickPick(items, { title: 'Agent: Resume', placeHolder: 'Paused and interrupted runs, newest first' }))?.runId;
    if (runId === undefined) return undefined;
  }
  const chosen = runId;
  // A run at its limit would pause again at once: the new limit is asked first ("Raise to…").
  // A run that cannot be read is said by the resume itself (launch), as before.
  const raise = await raiseBeforeResume(raiseDepsOf(s), chosen, arg?.options?.raise).catch(() => arg?.options?.raise);
  if (raise === null) {
    void s.prompts.message('info', LIMIT_LEFT, {});
    return undefined;
  }
  const options = { ...arg?.options, ...(raise ? { raise } : {}) };
  return launch(s, 'Agent: Resume', () => s.controller.resume(chosen, options));
}

export function cancelRun(s: Services): boolean {
  const cancelled = s.controller.cancel();
  if (!cancelled) void s.prompts.message('info', 'No agent run is in progress.', {});
  return cancelled;
}

export async function setApiKey(s: Services): Promise<void> {
  const key = await s.prompts.inputBox({
    title: 'Agent: Set API Key',
    prompt:
      "Anthropic API key, kept in VS Code's secret storage (never in settings or the run store). Leave empty to remove the stored key.",
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key.trim() === '') {
    await s.apiKeys.clear();
    void s.prompts.message('info', 'The stored API key was removed; ANTHROPIC_API_KEY from the environment is used if set.', {});
    return;
  }
  await s.apiKeys.set(key);
  s.log.log('info', 'API key stored in secret storage');
  void s.prompts.message('info', "API key stored in VS Code's secret storage.", {});
}

/** Tells the person that opening a run cut a torn write from its journal (the runtime logged it too). */
export function announceTornTailCut(s: Services, event: RuntimeEvent): void {
  if (event.type !== 'torn_tail_cut') return;
  void s.prompts.message('warning', event.message, {}, SHOW_LOG).then((c) => c === SHOW_LOG && s.channel.show(true));
}

/** Shows each warning a run records (a cost limit the model cannot honour, a deprecated model) as it is written. */
export function announceRunWarnings(s: Services, event: RuntimeEvent): void {
  if (event.type !== 'records') return;
  for (const record of event.records) {
    if (record.type !== 'note' || record.kind !== 'warning') continue;
    const text = `${record.text.charAt(0).toUpperCase()}${record.text.slice(1)}.`;
    void s.prompts.message('warning', text, {}, SHOW_LOG).then((c) => c === SHOW_LOG && s.channel.show(true));
  }
}
