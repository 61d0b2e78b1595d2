import { WORKSPACE_WRITE } from '../ledger/schema';
import { z } from 'zod';
import { encodeText } from '../patches/hash';
import { prepareWrite } from '../patches/record';
import { ToolError } from './errors';
import { applyAll, FILE_COMPENSATION } from './file-writes';
import { countOccurrences, endsLinesWithCrlf, readExisting, textOf, toCrlf } from './text';
import type { ToolDefinition } from './types';

const EditFileInput = z.strictObject({
  path: z.string().min(1).describe('Workspace-relative path of an existing text file.'),
  old_string: z.string().min(1).describe('Exact text to replace; it must occur exactly once in the file.'),
  new_string: z.string().describe('Replacement text.'),
});
type EditFileInput = z.infer<typeof EditFileInput>;

export const editFileTool: ToolDefinition<EditFileInput> = {
  name: 'edit_file',
  description:
    'Replace one exact occurrence of old_string with new_string in a file. old_string must occur exactly once; include surrounding lines to make it unique.',
  input: EditFileInput,
  idempotency: 'conditional',
  replayPolicy: 'auto',
  sideEffects: [WORKSPACE_WRITE],
  compensation: FILE_COMPENSATION,
  summarize: (input) => `edit ${input.path}`,
  writesPaths: (input) => [input.path],
  async prepare(input, ctx) {
    const live = await readExisting(ctx.workspace, input.path);
    const { text, bom } = textOf(live);
    // A CRLF file keeps its line ends: the model's `\n` matches and is written as `\r\n` (the BOM stays too).
    const crlf = endsLinesWithCrlf(text);
    const oldString = crlf ? toCrlf(input.old_string) : input.old_string;
    const newString = crlf ? toCrlf(input.new_string) : input.new_string;
    const count = countOccurrences(text, oldString);
    if (count === 0)
      throw new ToolError(`old_string was not found in ${live.path}; read the file and copy the exact text, whitespace included`);
    if (count > 1)
      throw new ToolError(`old_string occurs ${count} times in ${live.path}; include more surrounding text so that it occurs exactly once`);
    const at = text.indexOf(oldString);
    const next = text.slice(0, at) + newString + text.slice(at + oldString.length);
    return [await prepareWrite(ctx.workspace, live.path, encodeText(next, bom))];
  },
  execute: (_input, ctx, prepared) => applyAll(ctx, prepared, (write) => `edited ${write.path}`),
};
