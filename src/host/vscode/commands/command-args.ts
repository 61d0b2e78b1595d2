import { z } from 'zod';

// What the commands accept as their argument: each row of the command table (command-table.ts)
// names its schema. A command's argument comes from anyone (a menu, a CodeLens, another
// extension's executeCommand): parsed where it enters (commands/index.ts), never trusted.
// A strict schema refuses a malformed argument in words; a lenient one (`.catch(undefined)`)
// reads it as none, and the command then acts on what the editor shows.

const id = z.string().min(1);
const positive = z.number().positive();

export const RunArg = z.object({ task: z.string() }).partial();
export const ResumeArg = z
  .object({
    runId: id,
    options: z
      .object({
        raise: z.object({ maxTurns: positive, maxTokens: positive, maxCostUsd: positive }).partial(),
        maxContextTokens: z.number().int().positive(),
      })
      .partial(),
  })
  .partial();
export const RestoreArg = z.object({ runId: id, checkpointId: id, what: z.enum(['files', 'session', 'both']) }).partial();
export const PatchPickArg = z.object({ runId: id, patchId: id }).partial();
export const RunIdArg = z.object({ runId: id }).partial();

/** Lenient: a run named by its id or `{ runId }`; anything else, none (the person picks the run). */
export const RunRefArg = z
  .union([id, z.object({ runId: id }).transform((o) => o.runId)])
  .optional()
  .catch(undefined);
/** A hunk as CodeLens, hover links and tests name it. */
export const HunkArg = z.object({ runId: id, patchId: id, hunk: z.number().int().nonnegative() });
export type HunkArg = z.infer<typeof HunkArg>;
/** Lenient: a hunk; anything else, none (the hunk under the cursor). */
export const HunkRefArg = HunkArg.optional().catch(undefined);
/** Lenient: a patch (CodeLens arguments, a webview context-menu object); anything else, none (the active patch diff). */
export const PatchRefArg = z
  .looseObject({ runId: id, patchId: id, hunk: z.number().int().nonnegative().optional() })
  .optional()
  .catch(undefined);

/** The argument as `schema` reads it (undefined: none given), or an Error naming what is wrong. */
export function commandArg<T>(schema: z.ZodType<T>, arg: unknown, title: string): T | undefined | Error {
  if (arg === undefined || arg === null) return undefined;
  const parsed = schema.safeParse(arg);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return new Error(
    `${title}: the command's argument is not valid (${issue?.path.join('.') || 'argument'}: ${issue?.message ?? 'invalid'}); nothing was done`,
  );
}
