import { COMPARE_COMMAND, compareBranches, registerBranchContent } from './compare/index';
import { restoreCheckpoint, rollbackPatch, undoLastRestore } from './restore-commands';
import { COMMANDS } from '../run/run-commands';
import type { Feature, Register } from '../window/feature';

type RestoreCommandId = (typeof COMMANDS)['restoreCheckpoint' | 'rollbackPatch' | 'undoRestore'] | typeof COMPARE_COMMAND;

/** Going back: restore a checkpoint, roll back a patch, undo a restore, compare two branches. */
export const register: Register<Feature<RestoreCommandId>> = (s) => {
  const branches = registerBranchContent(s);
  return {
    commands: {
      [COMMANDS.restoreCheckpoint]: (arg) => restoreCheckpoint(s, arg),
      [COMMANDS.rollbackPatch]: (arg) => rollbackPatch(s, arg),
      [COMMANDS.undoRestore]: (arg) => undoLastRestore(s, arg),
      [COMPARE_COMMAND]: (arg) => compareBranches(s, arg),
    },
    dispose: () => branches.dispose(),
  };
};
