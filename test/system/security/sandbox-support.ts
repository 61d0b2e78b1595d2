import type { CommandChanges } from '../../../src/core/ports';
import type { Patch } from '../../../src/core/patches/schema';
import { applyCommandChanges } from '../../../src/core/tools/command-changes';
import type { PreparedWrite, ToolContext } from '../../../src/core/tools/types';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';

/** Applies a command's change set to the disk as run_command does (without a run: no patch records); its lines for the result. */
export async function applyToDisk(roots: readonly string[], changes: CommandChanges | undefined): Promise<string | undefined> {
  if (changes === undefined) return undefined;
  const workspace = new NodeWorkspace({ roots, ripgrep: null });
  const ctx = {
    workspace,
    async applyWrite(write: PreparedWrite): Promise<Patch> {
      if (write.after === null) await workspace.delete(write.path, write.beforeHash);
      else if (write.beforeHash !== write.afterHash) await workspace.write(write.path, write.after, write.beforeHash);
      // A command's chmod: the bit the write changes (a mode-only write has only this).
      if (write.after !== null && write.execAfter !== undefined) await workspace.setExecutable?.(write.path, write.execAfter);
      return {} as Patch;
    },
  } as unknown as ToolContext;
  try {
    return await applyCommandChanges(ctx, changes);
  } finally {
    await changes.discard();
  }
}
