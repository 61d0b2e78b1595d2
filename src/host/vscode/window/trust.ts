import type { Prompts } from './prompts';

export const RESTRICTED_MODE_MESSAGE =
  'Agent Checkpoints does not run the agent in Restricted Mode: the agent runs commands and writes files with your permissions. Trust this workspace to run it; the timeline stays readable.';
export const MANAGE_TRUST = 'Manage Workspace Trust';

export interface TrustGuardDeps {
  /** `vscode.workspace.isTrusted`, read at the moment of the check. */
  readonly isTrusted: () => boolean;
  readonly prompts: Prompts;
  /** Opens the trust editor (the `workbench.trust.manage` command). */
  readonly manageTrust: () => Thenable<unknown>;
}

/**
 * True when the agent may act. In a restricted workspace it says why and returns false before
 * anything runs: no model call, no tool, no file write, no run record.
 */
export function mayRunAgent(deps: TrustGuardDeps, action: string): boolean {
  if (deps.isTrusted()) return true;
  // Not awaited: the command returns at once; the notification stays until dismissed.
  void deps.prompts.message('warning', `${action}: ${RESTRICTED_MODE_MESSAGE}`, {}, MANAGE_TRUST).then((choice) => {
    if (choice === MANAGE_TRUST) void deps.manageTrust();
  });
  return false;
}
