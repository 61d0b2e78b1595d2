import * as vscode from 'vscode';
import { registerCompareBranches } from './compare/index';
import { CHOOSE_MODEL_COMMAND, chooseModel } from './model-picker';
import { REVOKE_MCP_COMMAND, revokeMcpServers } from './lm/mcp-servers';
import { restoreCheckpoint, rollbackPatch, undoLastRestore } from './restore-commands';
import { announceOutcome } from './outcome';
import { announceRunWarnings, announceTornTailCut, cancelRun, COMMANDS, resumeRun, runAgent, setApiKey } from './run-commands';
import type { Services } from './services';
import { readSettings } from './settings';
import { errorText } from '../../core/error-text';

/** Applies the retention settings; paused and interrupted runs are never removed. */
export async function collectGarbage(s: Services): Promise<void> {
  try {
    const { maxBytes, maxRuns } = readSettings().retention;
    const result = await s.store.collectGarbage({ maxBytes, maxRuns });
    if (result.removedRuns.length + result.removedBlobs > 0) {
      s.log.log(
        'info',
        `retention: removed ${result.removedRuns.length} run(s) and ${result.removedBlobs} blob(s), ${result.freedBytes} bytes`,
      );
    }
  } catch (error) {
    s.log.log('warn', `retention not applied: ${errorText(error)}`);
  }
}

/**
 * Registers the Agent commands of the palette (command-table.ts lists every one; the Timeline's
 * patch commands and the review's register with their views) and the reactions to a run.
 */
export function registerCommands(s: Services): vscode.Disposable[] {
  const register = vscode.commands.registerCommand;
  return [
    register(COMMANDS.run, (arg?: { task?: string }) => runAgent(s, arg)),
    register(COMMANDS.resume, (arg?: { runId?: string }) => resumeRun(s, arg)),
    register(COMMANDS.cancel, () => cancelRun(s)),
    register(COMMANDS.setApiKey, () => setApiKey(s)),
    register(COMMANDS.showLog, () => s.channel.show(true)),
    register(CHOOSE_MODEL_COMMAND, () => chooseModel(s)),
    register(REVOKE_MCP_COMMAND, () => revokeMcpServers(s.context.workspaceState, s.prompts)),
    register(COMMANDS.restoreCheckpoint, (arg?: Parameters<typeof restoreCheckpoint>[1]) => restoreCheckpoint(s, arg)),
    register(COMMANDS.rollbackPatch, (arg?: Parameters<typeof rollbackPatch>[1]) => rollbackPatch(s, arg)),
    register(COMMANDS.undoRestore, (arg?: Parameters<typeof undoLastRestore>[1]) => undoLastRestore(s, arg)),
    ...registerCompareBranches(s),
    s.controller.onDidStart(() => void s.keys.refresh()),
    s.controller.onEvent((event) => announceTornTailCut(s, event)),
    s.controller.onEvent((event) => announceRunWarnings(s, event)),
    s.controller.onDidFinish(({ run, outcome, error }) => {
      announceOutcome(s, run, outcome, error);
      void collectGarbage(s);
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void s.keys.refresh()),
  ];
}
