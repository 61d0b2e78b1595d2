import { z } from 'zod';
import type { CommandResult } from '../ports';
import { ToolError } from './errors';
import { applyChangeSet, applyCommandChanges, type AppliedChanges } from './command-changes';
import type { ToolDefinition } from './types';

export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
export const MAX_COMMAND_TIMEOUT_MS = 600_000;
export const MAX_COMMAND_OUTPUT_BYTES = 64 * 1024;

const RunCommandInput = z.strictObject({
  command: z
    .string()
    .min(1)
    .describe('Shell command, run in the workspace folder (a base environment plus the variables the person allowed).'),
  timeout_ms: z
    .number()
    .int()
    .positive()
    .max(MAX_COMMAND_TIMEOUT_MS)
    .optional()
    .describe('Kill the command after this many milliseconds (default 120000).'),
});
type RunCommandInput = z.infer<typeof RunCommandInput>;

export function formatCommandResult(result: CommandResult, changes?: string): string {
  const status = result.timedOut
    ? 'timed out (its process group was ended)'
    : result.cancelled
      ? 'cancelled (its process group was ended)'
      : result.exitCode === null
        ? `killed by signal ${result.signal ?? 'unknown'}`
        : `exit code ${result.exitCode}`;
  const parts = [`${status} after ${result.durationMs} ms${result.truncated ? ' (output truncated)' : ''}`];
  if (result.stdout !== '') parts.push(`--- stdout ---\n${result.stdout}`);
  if (result.stderr !== '') parts.push(`--- stderr ---\n${result.stderr}`);
  if (result.stillRunning !== undefined) parts.push(`--- may still be running ---\n${result.stillRunning}`);
  if (result.sandboxNote !== undefined) parts.push(`--- sandbox ---\n${result.sandboxNote}`);
  if (changes !== undefined) parts.push(`--- workspace changes ---\n${changes}`);
  if (result.environmentNote !== undefined) parts.push(`--- environment ---\n${result.environmentNote}`);
  return parts.join('\n');
}

/**
 * Whether everything a command did is held by the patches of its call, so that it is no external
 * effect (hasExternalEffect): the sandbox held it to its copy-on-write view (`isolated`), nothing
 * it started outlived it, and all it changed was applied as patches. Anything unknown: false.
 */
export function commandContained(result: CommandResult, changes: AppliedChanges | undefined): boolean {
  if (result.isolated !== true || result.stillRunning !== undefined) return false;
  return result.changes === undefined || changes?.allPatched === true;
}

export const runCommandTool: ToolDefinition<RunCommandInput> = {
  name: 'run_command',
  description:
    "Run a shell command in the workspace folder and return its exit code and (bounded) output. In the sandbox the command sees a copy-on-write view of the workspace: what it changes is applied after it exits, as patches of this call (the person's unsaved edits win; protected paths and .git/ are refused), and the result lists it. In that view renaming an existing folder fails with EXDEV (mv copies it instead; Node's fs.rename fails): move its files, or copy and delete.",
  input: RunCommandInput,
  idempotency: 'non_idempotent',
  replayPolicy: 'ask',
  sideEffects: ["runs a process with the user's permissions; may change anything it can reach"],
  compensation: 'not reversible',
  summarize: (input) => `run: ${input.command}`,
  async execute(input, ctx) {
    const cwd = ctx.workspace.roots[0];
    if (cwd === undefined) throw new ToolError('the workspace has no folder to run the command in');
    const result = await ctx.commands.run(input.command, {
      cwd,
      timeoutMs: input.timeout_ms ?? DEFAULT_COMMAND_TIMEOUT_MS,
      maxOutputBytes: MAX_COMMAND_OUTPUT_BYTES,
      signal: ctx.signal,
      callId: ctx.callId,
    });
    const changes = result.changes !== undefined ? await applyChangeSet(ctx, result.changes) : undefined;
    return {
      content: formatCommandResult(result, changes?.text),
      isError: result.timedOut || result.cancelled === true || result.exitCode !== 0,
      ...(result.changes !== undefined ? { afterRecorded: result.changes.discard } : {}),
      ...(commandContained(result, changes) ? { contained: true } : {}),
    };
  },
  async settle(_input, ctx) {
    const left = await ctx.commands.recover?.(ctx.callId);
    if (left === undefined) return undefined;
    const applied = await applyCommandChanges(ctx, left);
    if (applied === undefined) {
      // Nothing captured: whether it ran at all is for the usual reconciliation (the person, or "unknown").
      await left.discard();
      return undefined;
    }
    return {
      content: [
        'It ended with its host and was not run again (its output is lost). What it had changed by then in its copy-on-write view and was not in the workspace yet was applied now (a file applied before the interruption stays as it is, without a patch of this call):',
        applied,
      ].join('\n'),
      isError: true,
      afterRecorded: left.discard,
    };
  },
};
