import type { CommandResult } from '../../../core/ports';
import type { RunSettings } from '../../../core/store/records';
import { bwrapArgs, detectSandbox, type SandboxKind } from './bwrap';
import { planSandbox, readOnlyNote, removePlaceholders, type SandboxRefusal, type SandboxPlan, type SandboxRequest } from './plan';
import { sandboxExecArgs } from './seatbelt';

export { detectSandbox, type SandboxKind } from './bwrap';
export { SandboxRefusal, type SandboxRequest } from './plan';

/** `agentCheckpoints.sandbox` / `--no-sandbox`, and `agentCheckpoints.commandNetwork` / `--command-network`. */
export type SandboxMode = 'auto' | 'off';
export type CommandNetwork = 'on' | 'off';

/** What a run records of how its commands ran. */
export function commandSettings(mode: SandboxMode, network: CommandNetwork): NonNullable<RunSettings['commands']> {
  if (mode === 'off') return { sandbox: 'off', network };
  const kind = detectSandbox();
  return { sandbox: kind.kind === 'none' ? 'unavailable' : kind.kind, network };
}

/** One command ready to start inside the sandbox: what to spawn, and what to do once it ended. */
export interface SandboxedLaunch {
  readonly file: string;
  readonly args: readonly string[];
  /** Removes placeholders; gives the note for the tool result when a write was stopped. */
  finish(result: CommandResult): CommandResult;
}

/**
 * The launch of `command` in the platform's sandbox; undefined when there is none (the caller
 * runs it plainly, having warned). Throws SandboxRefusal when the workspace holds what the sandbox
 * cannot protect.
 */
export function sandboxedLaunch(kind: SandboxKind, request: SandboxRequest, cwd: string, command: string): SandboxedLaunch | undefined {
  if (kind.kind === 'none') return undefined;
  const plan: SandboxPlan = planSandbox(request);
  const args = kind.kind === 'bwrap' ? bwrapArgs(plan, cwd, command) : sandboxExecArgs(plan, command);
  return {
    file: kind.path,
    args,
    finish(result) {
      removePlaceholders(plan);
      const note = readOnlyNote(plan, `${result.stdout}\n${result.stderr}`, kind.kind === 'bwrap' ? 'bubblewrap' : 'sandbox-exec');
      return note === undefined ? result : { ...result, sandboxNote: note };
    },
  };
}

/** The result of a command the sandbox refused to start. */
export function refusedResult(error: SandboxRefusal): CommandResult {
  return {
    exitCode: 126,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut: false,
    truncated: false,
    durationMs: 0,
    sandboxNote: error.message,
  };
}
