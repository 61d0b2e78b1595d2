import * as vscode from 'vscode';
import type { RunOutcome, RuntimeEvent } from '../../../core/runtime';
import { describeFailure } from '../../../words/failure-words';
import type { ActiveRun, AgentController } from './agent-controller';
import { TIMELINE_FOCUS, type CommandId } from '../commands/command-table';

export const SHOW_LOG_COMMAND = 'agentCheckpoints.showLog' satisfies CommandId;
const TIMELINE_FOCUS_COMMAND = TIMELINE_FOCUS;

/** The calls waiting for a decision (the InlineApprover). */
export interface WaitingApprovals {
  readonly onDidChange: vscode.Event<void>;
  pending(): readonly { readonly runId: string }[];
}

const LABELS: Record<string, string> = {
  run_start: 'starting',
  before_model: 'asking the model',
  after_model: 'answer received',
  tool_planned: 'planning a tool call',
  tool_approved: 'tool call approved',
  tool_started: 'running a tool',
  tool_finished: 'tool finished',
  file_written: 'file written',
  run_end: 'finishing',
  compacted: 'context compacted',
};

function shorten(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** What a run is doing now, in words: "step 3 · running a tool (run_command)". */
export function describeProgress(event: RuntimeEvent, last: string): string {
  if (event.type === 'checkpoint') return `step ${event.checkpoint.stepId} · ${LABELS[event.checkpoint.label] ?? event.checkpoint.label}`;
  if (event.type === 'ledger' && event.entry.status === 'started')
    return `${last.split(' · ')[0] ?? last} · running ${event.entry.toolName}`;
  // A retry replaces the one before it: "(retry 3)", never "(retry 2) (retry 3)"; a rate limit says its wait.
  if (event.type === 'model' && event.event.type === 'retry') {
    const said = event.event.waitMs !== undefined ? event.event.error : `retry ${event.event.attempt}`;
    return `${last.replace(/ \((retry \d+|rate limited, retrying in [^()]*)\)$/, '')} (${said})`;
  }
  return last;
}

function outcomeIcon(outcome: RunOutcome | undefined): string {
  if (!outcome) return '$(error)';
  return outcome.status === 'completed' ? '$(check)' : outcome.status === 'paused' ? '$(debug-pause)' : '$(error)';
}

/**
 * The run as the person sees it: a cancellable progress notification while it runs and a
 * status bar item with its state and step (click: the log).
 */
export class RunPresenter implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentCheckpoints.status', vscode.StatusBarAlignment.Left, 10);
  private readonly subscriptions: vscode.Disposable[] = [];
  private progressText = '';

  constructor(
    private readonly controller: AgentController,
    private readonly approvals?: WaitingApprovals,
  ) {
    this.item.name = 'Agent Checkpoints';
    this.item.command = SHOW_LOG_COMMAND;
    this.subscriptions.push(
      controller.onDidStart((run) => this.onStart(run)),
      controller.onEvent((event) => this.onEvent(event)),
      controller.onDidFinish(({ run, outcome }) => this.onFinish(run, outcome)),
      ...(approvals ? [approvals.onDidChange(() => this.controller.current && this.show(this.controller.current))] : []),
    );
  }

  /** Current status bar text, for tests. */
  get statusText(): string {
    return this.item.text;
  }

  private onStart(run: ActiveRun): void {
    this.progressText = run.kind === 'resume' ? 'resuming' : 'starting';
    this.show(run);
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Agent: ${shorten(run.task, 60)}`, cancellable: true },
      (progress, token) => {
        token.onCancellationRequested(() => {
          if (this.controller.current === run) this.controller.cancel();
        });
        const listener = this.controller.onEvent((event) => {
          if (event.runId === run.runId) progress.report({ message: this.progressText });
        });
        return run.done.finally(() => listener.dispose());
      },
    );
  }

  private onEvent(event: RuntimeEvent): void {
    const run = this.controller.current;
    if (!run || event.runId !== run.runId) return;
    this.progressText = describeProgress(event, this.progressText);
    this.show(run);
  }

  private show(run: ActiveRun): void {
    const waiting = this.approvals?.pending().filter((p) => p.runId === run.runId).length ?? 0;
    if (waiting > 0) {
      this.item.text = `$(shield) Agent: waiting for your approval${waiting > 1 ? ` (${waiting})` : ''}`;
      this.item.tooltip = `Run ${run.runId}: ${shorten(run.task, 200)}\nA tool call waits for your decision: click to open the Timeline.`;
      this.item.command = TIMELINE_FOCUS_COMMAND;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    } else {
      this.item.text = `$(sync~spin) Agent: ${this.progressText}`;
      this.item.tooltip = `Run ${run.runId}: ${shorten(run.task, 200)}\nClick for the log; "Agent: Stop Run" stops it at the next safe point.`;
      this.item.command = SHOW_LOG_COMMAND;
      this.item.backgroundColor = undefined;
    }
    this.item.show();
  }

  private onFinish(run: ActiveRun, outcome: RunOutcome | undefined): void {
    this.item.command = SHOW_LOG_COMMAND;
    this.item.backgroundColor = undefined;
    const state = outcome ? outcome.status : 'error';
    const why = outcome?.failure ? ` · ${shorten(describeFailure(outcome.failure).title, 60)}` : '';
    this.item.text = `${outcomeIcon(outcome)} Agent: ${state}${why}`;
    this.item.tooltip = `Run ${run.runId}: ${state}${outcome?.reason !== undefined ? ` (${shorten(outcome.reason, 200)})` : ''}`;
    this.item.show();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
