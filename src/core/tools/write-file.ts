import { WORKSPACE_WRITE } from '../ledger/schema';
import { z } from 'zod';
import { decodeText, encodeText, hasUtf8Bom } from '../patches/hash';
import { prepareWrite } from '../patches/record';
import { applyAll, FILE_COMPENSATION } from './file-writes';
import { endsLinesWithCrlf, toCrlf } from './text';
import type { ToolDefinition } from './types';

const WriteFileInput = z.strictObject({
  path: z.string().min(1).describe('Workspace-relative path; missing folders are created.'),
  content: z.string().describe('The complete new content of the file.'),
});
type WriteFileInput = z.infer<typeof WriteFileInput>;

export const writeFileTool: ToolDefinition<WriteFileInput> = {
  name: 'write_file',
  description: 'Create a file or replace its whole content.',
  input: WriteFileInput,
  idempotency: 'conditional',
  replayPolicy: 'auto',
  sideEffects: [WORKSPACE_WRITE],
  compensation: FILE_COMPENSATION,
  summarize: (input) => `write ${input.path} (${input.content.length} chars)`,
  writesPaths: (input) => [input.path],
  async prepare(input, ctx) {
    const path = await ctx.workspace.normalize(input.path);
    const live = await ctx.workspace.read(path);
    const bom = live !== null && hasUtf8Bom(live.bytes);
    // A file whose lines all end in `\r\n` keeps them when the new content has no `\r` of its own.
    const before = live === null ? null : decodeText(live.bytes);
    const crlf = before !== null && endsLinesWithCrlf(before.text) && !input.content.includes('\r');
    return [await prepareWrite(ctx.workspace, path, encodeText(crlf ? toCrlf(input.content) : input.content, bom))];
  },
  execute: (_input, ctx, prepared) =>
    applyAll(
      ctx,
      prepared,
      (write) => `${write.beforeHash === 'absent' ? 'created' : 'wrote'} ${write.path} (${write.after?.length ?? 0} bytes)`,
    ),
};
