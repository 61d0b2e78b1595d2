import { WORKSPACE_DELETE } from '../ledger/schema';
import { z } from 'zod';
import { prepareWrite } from '../patches/record';
import { applyAll, FILE_COMPENSATION } from './file-writes';
import { readExisting } from './text';
import type { ToolDefinition } from './types';

const DeleteFileInput = z.strictObject({
  path: z.string().min(1).describe('Workspace-relative path of the file to delete.'),
});
type DeleteFileInput = z.infer<typeof DeleteFileInput>;

export const deleteFileTool: ToolDefinition<DeleteFileInput> = {
  name: 'delete_file',
  description: 'Delete a file of the workspace (its content is kept so the deletion can be rolled back).',
  input: DeleteFileInput,
  idempotency: 'conditional',
  replayPolicy: 'auto',
  sideEffects: [WORKSPACE_DELETE],
  compensation: FILE_COMPENSATION,
  summarize: (input) => `delete ${input.path}`,
  writesPaths: (input) => [input.path],
  async prepare(input, ctx) {
    const live = await readExisting(ctx.workspace, input.path);
    return [await prepareWrite(ctx.workspace, live.path, null)];
  },
  execute: (_input, ctx, prepared) => applyAll(ctx, prepared, (write) => `deleted ${write.path}`),
};
