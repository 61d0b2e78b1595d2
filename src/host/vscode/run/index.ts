import * as vscode from 'vscode';
import { CHOOSE_MODEL_COMMAND, chooseModel } from './model-picker';
import { REVOKE_MCP_COMMAND, revokeMcpServers } from './lm/mcp-servers';
import { announceOutcome } from './outcome';
import { announceRunWarnings, announceTornTailCut, cancelRun, COMMANDS, resumeRun, runAgent, setApiKey } from './run-commands';
import type { Feature, Register } from '../window/feature';
import type { Services } from '../window/services';
import { readSettings } from '../window/settings';
import { errorText } from '../../../core/error-text';
import { counted } from '../../../words/words';

/** Applies the retention settings; paused and interrupted runs are never removed. */
export async function collectGarbage(s: Services): Promise<void> {
  try {
    const { maxBytes, maxRuns } = readSettings().retention;
    const result = await s.store.collectGarbage({ maxBytes, maxRuns });
    if (result.removedRuns.length + result.removedBlobs > 0) {
      s.log.log(
        'info',
        `retention: removed ${counted(result.removedRuns.length, 'run')} and ${counted(result.removedBlobs, 'blob')}, ${result.freedBytes} bytes`,
      );
    }
  } catch (error) {
    s.log.log('warn', `retention not applied: ${errorText(error)}`);
  }
}

type RunCommandId =
  (typeof COMMANDS)['run' | 'resume' | 'cancel' | 'setApiKey' | 'showLog'] | typeof CHOOSE_MODEL_COMMAND | typeof REVOKE_MCP_COMMAND;

/** Running the agent: Run, Resume, Stop, the key, the model, the log; and the reactions to a run (its outcome, retention). */
export const register: Register<Feature<RunCommandId>> = (s) => {
  const reactions = [
    s.controller.onDidStart(() => void s.keys.refresh()),
    s.controller.onEvent((event) => announceTornTailCut(s, event)),
    s.controller.onEvent((event) => announceRunWarnings(s, event)),
    s.controller.onDidFinish(({ run, outcome, error }) => {
      announceOutcome(s, run, outcome, error);
      void collectGarbage(s);
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void s.keys.refresh()),
  ];
  return {
    commands: {
      [COMMANDS.run]: (arg) => runAgent(s, arg),
      [COMMANDS.resume]: (arg) => resumeRun(s, arg),
      [COMMANDS.cancel]: () => cancelRun(s),
      [COMMANDS.setApiKey]: () => setApiKey(s),
      [COMMANDS.showLog]: () => s.channel.show(true),
      [CHOOSE_MODEL_COMMAND]: () => chooseModel(s),
      [REVOKE_MCP_COMMAND]: () => revokeMcpServers(s.context.workspaceState, s.prompts),
    },
    dispose: () => reactions.forEach((d) => d.dispose()),
  };
};
