import * as vscode from 'vscode';
import { shellOf, windowsProfileProgram, type Shell } from '../../node/shell';

/**
 * The shell of the agent's commands: on Windows the person's default terminal profile when it is
 * cmd or a PowerShell (user settings only: a workspace cannot pick the program commands start
 * through), else cmd.exe; /bin/sh elsewhere.
 */
export function commandShell(): Shell {
  if (process.platform !== 'win32') return shellOf(process.platform, process.env);
  const terminal = vscode.workspace.getConfiguration('terminal.integrated');
  const program = windowsProfileProgram(
    terminal.inspect('defaultProfile.windows')?.globalValue,
    terminal.inspect('profiles.windows')?.globalValue,
  );
  return shellOf('win32', process.env, program);
}
