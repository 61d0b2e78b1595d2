import type * as vscode from 'vscode';
import { createApi, type AgentCheckpointsApi } from './api';
import { registerCommands } from './commands';
import * as restore from './restore';
import * as review from './review';
import * as run from './run';
import { offerInterruptedRuns } from './run/interrupted';
import * as timeline from './timeline';
import { createServices } from './window/services';

/**
 * Activation: the window's services, then each feature's `register(window)` in order, then every
 * command of the table from their handlers; then the keys and the offer of interrupted runs.
 */
export function activate(context: vscode.ExtensionContext): AgentCheckpointsApi {
  const s = createServices(context);
  const shown = timeline.register(s);
  const reviewing = review.register(s);
  const running = run.register(s);
  const restoring = restore.register(s);
  const commands = registerCommands(s, { ...running.commands, ...restoring.commands, ...reviewing.commands, ...shown.commands });
  context.subscriptions.push(commands, running, restoring, shown, reviewing);
  void s.keys.refresh();
  void offerInterruptedRuns(s).catch((error: unknown) => s.log.log('warn', `interrupted runs not offered: ${String(error)}`));
  return createApi(s, shown.backend, () => shown.whenResolved, reviewing);
}
