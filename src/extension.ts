import * as vscode from 'vscode';
import { createApi, type AgentCheckpointsApi } from './host/vscode/api';
import { registerCommands } from './host/vscode/commands';
import { offerInterruptedRuns } from './host/vscode/interrupted';
import { createServices } from './host/vscode/services';
import { registerTimelineView, TimelineResolution } from './host/vscode/timeline-placeholder';
import { ExtensionTimelineBackend } from './host/vscode/timeline-backend';

export type { AgentCheckpointsApi };

export function activate(context: vscode.ExtensionContext): AgentCheckpointsApi {
  const services = createServices(context);
  const timeline = new TimelineResolution();
  const backend = new ExtensionTimelineBackend(services);
  context.subscriptions.push(...registerCommands(services), backend, registerTimelineView(context, timeline));
  void services.keys.refresh();
  void offerInterruptedRuns(services).catch((error: unknown) => services.log.log('warn', `interrupted runs not offered: ${String(error)}`));
  return createApi(services, backend, () => timeline.resolved);
}

export function deactivate(): void {}
