import { StaleContentError } from '../ports';
import { ToolError } from './errors';
import type { PreparedWrite, ToolContext, ToolOutput } from './types';

/** Applies every prepared write through the context (one file_written save point each). */
export async function applyAll(
  ctx: ToolContext,
  prepared: readonly PreparedWrite[],
  describe: (write: PreparedWrite) => string,
): Promise<ToolOutput> {
  const lines: string[] = [];
  for (const write of prepared) {
    try {
      await ctx.applyWrite(write);
    } catch (error) {
      if (error instanceof StaleContentError) {
        throw new ToolError(
          `${write.path} changed after the edit was prepared (someone else edited it); nothing was written to it. Read it again before editing.`,
        );
      }
      throw error;
    }
    lines.push(describe(write));
  }
  return { content: lines.join('\n') };
}

export const FILE_COMPENSATION =
  "roll back the recorded patch (restores the previous content; the user's later edits are kept hunk by hunk)";
