import * as vscode from 'vscode';
import { COMPARE_COMMAND, compareBranches, registerBranchContent } from '../restore/compare/index';
import { COMMAND_IDS, type CommandHandlers } from './command-table';
import { commandArg, PatchPickArg, RestoreArg, ResumeArg, RunArg, RunIdArg } from './command-args';
import type { z } from 'zod';
import { CHOOSE_MODEL_COMMAND, chooseModel } from '../run/model-picker';
import { REVOKE_MCP_COMMAND, revokeMcpServers } from '../run/lm/mcp-servers';
import { restoreCheckpoint, rollbackPatch, undoLastRestore } from '../restore/restore-commands';
import { announceOutcome } from '../run/outcome';
import { announceRunWarnings, announceTornTailCut, cancelRun, COMMANDS, resumeRun, runAgent, setApiKey } from '../run/run-commands';
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

/** The commands the Timeline and the inline review carry out (they own the state those need). */
export type ViewCommands = Omit<CommandHandlers, keyof ReturnType<typeof paletteCommands>>;

/** A handler that parses its argument first: a bad one is said in words and nothing runs. */
function parsing<T>(s: Services, schema: z.ZodType<T>, title: string, run: (arg: T | undefined) => unknown) {
  return (raw?: unknown) => {
    const arg = commandArg(schema, raw, title);
    if (!(arg instanceof Error)) return run(arg);
    s.log.log('warn', arg.message);
    void s.prompts.message('error', arg.message, {});
    return undefined;
  };
}

function paletteCommands(s: Services) {
  return {
    [COMMANDS.run]: parsing(s, RunArg, 'Agent: Run', (arg) => runAgent(s, arg)),
    [COMMANDS.resume]: parsing(s, ResumeArg, 'Agent: Resume', (arg) => resumeRun(s, arg)),
    [COMMANDS.cancel]: () => cancelRun(s),
    [COMMANDS.setApiKey]: () => setApiKey(s),
    [COMMANDS.showLog]: () => s.channel.show(true),
    [CHOOSE_MODEL_COMMAND]: () => chooseModel(s),
    [REVOKE_MCP_COMMAND]: () => revokeMcpServers(s.context.workspaceState, s.prompts),
    [COMMANDS.restoreCheckpoint]: parsing(s, RestoreArg, 'Agent: Restore Checkpoint', (arg) => restoreCheckpoint(s, arg)),
    [COMMANDS.rollbackPatch]: parsing(s, PatchPickArg, 'Agent: Roll Back Patch', (arg) => rollbackPatch(s, arg)),
    [COMMANDS.undoRestore]: parsing(s, RunIdArg, 'Agent: Undo Last Restore', (arg) => undoLastRestore(s, arg)),
    [COMPARE_COMMAND]: (arg?: unknown) => compareBranches(s, arg),
  } as const;
}

/**
 * Registers every command of the table (command-table.ts), in one place: the palette's here, the
 * Timeline's and the review's handed in by their views (the type requires a handler for every row).
 * Then the reactions to a run.
 */
export function registerCommands(s: Services, views: ViewCommands): vscode.Disposable[] {
  const handlers: CommandHandlers = { ...paletteCommands(s), ...views };
  return [
    ...COMMAND_IDS.map((id) => vscode.commands.registerCommand(id, handlers[id])),
    registerBranchContent(s),
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
