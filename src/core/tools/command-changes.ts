import { PathRefusedError, StaleContentError, type CommandChanges, type CommandFileChange } from '../ports';
import { ABSENT } from '../patches/hash';
import { prepareWrite } from '../patches/record';
import { modeWords } from '../../words/words';
import type { ToolContext } from './types';

// A command's change set becomes patches of its call, through the same path as write_file and
// delete_file: the live content (an editor's unsaved buffer included) must still be what the
// command started from, else the person's version wins and the file is named as a conflict.

/** Why a file was not applied (the person's version stays). */
class Conflict extends Error {}

interface Applied {
  readonly mark: 'A' | 'M' | 'D' | '=';
  readonly path: string;
  /** The content's hash: the new one (A, M), the removed one (D). */
  readonly hash: string;
  readonly tail: string;
}

interface Outcome {
  readonly applied: Applied[];
  readonly conflicts: string[];
  /** Files the system would not let the person's own process write (a folder they cannot write): left as they were. */
  readonly unwritable: string[];
}

/** The system refused the write (permissions, a read-only mount): nothing was placed, and the other files still go. */
function refusedBySystem(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'NoPermissions');
}

/** Applies one file (a patch of the call), or throws why not. */
async function applyOne(ctx: ToolContext, change: CommandFileChange): Promise<Applied> {
  if (change.conflict !== undefined) throw new Conflict(change.conflict);
  const after = change.kind === 'write' ? await change.content() : null;
  const write = await prepareWrite(ctx.workspace, change.path, after, change.kind === 'write' ? change.executable : undefined);
  const mode = modeWords(write);
  if (write.beforeHash === write.afterHash && mode === undefined)
    return {
      mark: '=',
      path: write.path,
      hash: write.afterHash,
      tail: ' (already so: the same content was there, or it was applied before an interruption; no patch of this call holds it)',
    };
  if (write.beforeHash !== change.beforeHash)
    throw new Conflict('it differs from what the command started from (edited meanwhile, maybe unsaved): your version was kept');
  await ctx.applyWrite(write);
  const mark = change.kind === 'delete' ? 'D' : write.beforeHash === ABSENT ? 'A' : 'M';
  const tail = `${change.binary ? ' (binary)' : ''}${write.execAfter === true && mark === 'A' ? ' (executable)' : ''}${mode ? ` (${mode})` : ''}`;
  return { mark, path: write.path, hash: mark === 'D' ? write.beforeHash : write.afterHash, tail };
}

async function applyFiles(ctx: ToolContext, files: readonly CommandFileChange[]): Promise<Outcome> {
  const outcome: Outcome = { applied: [], conflicts: [], unwritable: [] };
  for (const change of files) {
    try {
      outcome.applied.push(await applyOne(ctx, change));
    } catch (error) {
      if (error instanceof Conflict || error instanceof StaleContentError || error instanceof PathRefusedError)
        outcome.conflicts.push(`${change.path}: ${error.message}`);
      else if (refusedBySystem(error)) outcome.unwritable.push(`${change.path}: ${error.message}`);
      else throw error;
    }
  }
  return outcome;
}

/** The lines of what was applied; a deleted and a created file with the same content read as a rename (each stays its own patch). */
function appliedLines(applied: readonly Applied[]): string[] {
  const created = applied.filter((a) => a.mark === 'A');
  const paired = new Set<Applied>();
  const lines: string[] = [];
  for (const gone of applied.filter((a) => a.mark === 'D')) {
    const twin = created.find((a) => a.hash === gone.hash && !paired.has(a));
    if (twin === undefined) continue;
    paired.add(twin).add(gone);
    lines.push(`R ${gone.path} -> ${twin.path}${twin.tail}`);
  }
  return [...applied.filter((a) => !paired.has(a)).map((a) => `${a.mark} ${a.path}${a.tail}`), ...lines];
}

/** What became of a change set: the lines for the tool result, and whether all of it is held by patches of the call. */
export interface AppliedChanges {
  readonly text: string | undefined;
  /** Every change is applied as a patch (or was there already): nothing refused, in conflict, or placed without a patch. */
  readonly allPatched: boolean;
}

/**
 * Applies a command's change set as patches of the call and says what became of every path (for
 * the tool result). The captured files stay until `changes.discard()`, which the caller runs once
 * the call's result is on disk (a host that dies before finds them at the next open: run_command's
 * settle); on a failure they are kept for that too, and released: a closing window's host may
 * live on for seconds, and the next open must not wait for it.
 */
export async function applyChangeSet(ctx: ToolContext, changes: CommandChanges): Promise<AppliedChanges> {
  const { applied, conflicts, unwritable } = await applyFiles(ctx, changes.files).catch((error: unknown) => {
    changes.release?.();
    throw error;
  });
  const lines = [
    ...(applied.length > 0 ? ['Applied as patches of this call (Keep/Undo, Restore):', ...appliedLines(applied).map((l) => `  ${l}`)] : []),
    ...(conflicts.length > 0
      ? ['Not applied (conflict: the workspace differs from what the command saw):', ...conflicts.map((l) => `  ${l}`)]
      : []),
    ...(unwritable.length > 0
      ? ['Not applied (you cannot write it here; the workspace differs from what the command saw):', ...unwritable.map((l) => `  ${l}`)]
      : []),
    ...(changes.refused.length > 0
      ? ['Not applied (refused; the workspace differs from what the command saw):', ...changes.refused.map((r) => `  ${r.path}: ${r.rule}`)]
      : []),
    ...changes.notes,
  ];
  return {
    text: lines.length === 0 ? undefined : lines.join('\n'),
    allPatched: changes.allInFiles === true && conflicts.length === 0 && unwritable.length === 0 && changes.refused.length === 0,
  };
}

/** applyChangeSet's lines for the tool result only (an MCP server's change set, the settle of a cut command). */
export async function applyCommandChanges(ctx: ToolContext, changes: CommandChanges): Promise<string | undefined> {
  return (await applyChangeSet(ctx, changes)).text;
}
