import { COMPARE_COMMAND, compareBranches, registerBranchContent } from './compare/index';
import { restoreCheckpoint, rollbackPatch, undoLastRestore } from './restore-commands';
import type { CommandId } from '../commands/command-table';
import type { Feature, Register } from '../window/feature';

export const RESTORE_COMMANDS = {
  restoreCheckpoint: 'agentCheckpoints.restoreCheckpoint',
  rollbackPatch: 'agentCheckpoints.rollbackPatchPick',
  undoRestore: 'agentCheckpoints.undoRestore',
} as const satisfies Record<string, CommandId>;

type RestoreCommandId = (typeof RESTORE_COMMANDS)[keyof typeof RESTORE_COMMANDS] | typeof COMPARE_COMMAND;

/** Going back: restore a checkpoint, roll back a patch, undo a restore, compare two branches. */
export const register: Register<Feature<RestoreCommandId>> = (s) => {
  const branches = registerBranchContent(s);
  return {
    commands: {
      [RESTORE_COMMANDS.restoreCheckpoint]: (arg) => restoreCheckpoint(s, arg),
      [RESTORE_COMMANDS.rollbackPatch]: (arg) => rollbackPatch(s, arg),
      [RESTORE_COMMANDS.undoRestore]: (arg) => undoLastRestore(s, arg),
      [COMPARE_COMMAND]: (arg) => compareBranches(s, arg),
    },
    dispose: () => branches.dispose(),
  };
};
