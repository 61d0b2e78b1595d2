import type * as vscode from 'vscode';
import { createApi, type AgentCheckpointsApi } from './host/vscode/api';
import { registerCommands } from './host/vscode/commands/commands';
import { offerInterruptedRuns } from './host/vscode/run/interrupted';
import { createServices } from './host/vscode/window/services';
import { registerReview } from './host/vscode/review';
import { registerTimeline } from './host/vscode/timeline';
import { ExtensionConversation } from './host/vscode/timeline/extension-conversation';
import { ExtensionTimelineBackend } from './host/vscode/timeline/extension-backend';

export type { AgentCheckpointsApi };

export function activate(context: vscode.ExtensionContext): AgentCheckpointsApi {
  const services = createServices(context);
  const backend = new ExtensionTimelineBackend(services);
  const conversation = new ExtensionConversation(services);
  const review = registerReview(services);
  const timeline = registerTimeline(context, backend, conversation, {
    log: (message) => services.log.log('warn', `timeline: ${message}`),
    reviewCount: (runId) => services.model.reviewCount(runId),
  });
  services.approvals.surface = timeline.provider;
  context.subscriptions.push(...registerCommands(services, { ...timeline.commands, ...review.commands }), conversation, timeline, review);
  void services.keys.refresh();
  void offerInterruptedRuns(services).catch((error: unknown) => services.log.log('warn', `interrupted runs not offered: ${String(error)}`));
  return createApi(services, backend, () => timeline.whenResolved, review);
}

export function deactivate(): void {}
