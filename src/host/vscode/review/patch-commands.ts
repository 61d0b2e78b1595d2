import type { CommandId } from '../commands/command-table';

/** The patch commands of the Timeline, the patch diff editor and the review's CodeLens. */
export const PATCH_COMMANDS = {
  openDiff: 'agentCheckpoints.openDiff',
  acceptPatch: 'agentCheckpoints.acceptPatch',
  rollbackPatch: 'agentCheckpoints.rollbackPatch',
} as const satisfies Record<string, CommandId>;
