import { z } from 'zod';

// What the palette's commands accept as their argument. A command's argument comes from anyone
// (a menu, a CodeLens, another extension's executeCommand): parsed where it enters, never trusted.

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
