import * as vscode from 'vscode';
import { registerTimelineView, TimelineResolution } from './host/vscode/timeline-placeholder';

/** What the extension exports: a small surface for host tests and other extensions. */
export interface AgentCheckpointsApi {
  whenTimelineResolved(): Promise<void>;
}

export function activate(context: vscode.ExtensionContext): AgentCheckpointsApi {
  const timeline = new TimelineResolution();
  context.subscriptions.push(
    vscode.commands.registerCommand('agentCheckpoints.run', () =>
      vscode.window.showInformationMessage('Agent Checkpoints: the agent runtime is not built yet.'),
    ),
    vscode.commands.registerCommand('agentCheckpoints.resume', () =>
      vscode.window.showInformationMessage('Agent Checkpoints: there is no run to resume yet.'),
    ),
    registerTimelineView(context, timeline),
  );
  return { whenTimelineResolved: () => timeline.resolved };
}

export function deactivate(): void {}
