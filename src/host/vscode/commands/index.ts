import * as vscode from 'vscode';
import { CATEGORY, COMMAND_IDS, COMMAND_TABLE, type CommandEntry, type CommandHandlers, type CommandId } from './command-table';
import { commandArg } from './command-args';
import type { Services } from '../window/services';

/**
 * The handler of row `id` as VS Code calls it: the argument parsed by the row's schema first; a
 * malformed one is said in words and nothing runs.
 */
function entering(s: Services, id: CommandId, handler: (arg: unknown) => unknown): (raw?: unknown) => unknown {
  const row: CommandEntry = COMMAND_TABLE[id];
  const schema = row.arg;
  if (schema === undefined) return handler;
  const title = `${CATEGORY}: ${row.title.replace(/\.\.\.$/, '')}`;
  return (raw?: unknown) => {
    const arg = commandArg(schema, raw, title);
    if (!(arg instanceof Error)) return handler(arg);
    s.log.log('warn', arg.message);
    void s.prompts.message('error', arg.message, {});
    return undefined;
  };
}

/**
 * Registers every command of the table (command-table.ts), in one place, from the handlers the
 * features give (the type requires a handler for every row).
 */
export function registerCommands(s: Services, handlers: CommandHandlers): vscode.Disposable {
  return vscode.Disposable.from(
    ...COMMAND_IDS.map((id) => vscode.commands.registerCommand(id, entering(s, id, handlers[id] as (arg: unknown) => unknown))),
  );
}
