import type { Workspace } from '../ports';

// The executable bit, the one file mode a patch holds (git tracks only it; Windows has none). A
// patch names the bit of a side only when the write changes it: a chmod by a command (a mode-only
// patch: the same bytes on both sides), a file created executable, an executable file deleted.
// Writes of bytes keep the live file's mode, so an edit of a script needs nothing.

export interface ExecBits {
  readonly execBefore?: boolean;
  readonly execAfter?: boolean;
}

/**
 * The bits a write records. `live`: the live file's bit (null: no file; undefined: not known).
 * `wanted`: the bit the writer gives the new content (a command's); undefined keeps the live one.
 */
export function execBitsOf(live: boolean | null | undefined, after: Uint8Array | null, wanted: boolean | undefined): ExecBits {
  if (live === undefined) return {};
  if (after === null) return live === true ? { execBefore: true } : {};
  if (wanted === undefined) return {};
  if (live === null) return wanted ? { execAfter: true } : {};
  return live === wanted ? {} : { execBefore: live, execAfter: wanted };
}

/** The live bit when the workspace knows modes (null: no file), else undefined. */
export async function liveExec(workspace: Workspace, path: string): Promise<boolean | null | undefined> {
  return workspace.executable ? workspace.executable(path) : undefined;
}

/**
 * Gives a file the bit a write or restore leaves, once its bytes are there. `expected`: the bit
 * the file has now (a check against the person's change); undefined for a file just created.
 */
export async function placeExec(workspace: Workspace, path: string, executable: boolean | undefined, expected?: boolean): Promise<void> {
  if (executable === undefined || executable === expected || !workspace.setExecutable) return;
  await workspace.setExecutable(path, executable, expected);
}

/** The bits that are set, as record fields (a record never holds an undefined field). */
export function execFields(bits: ExecBits): ExecBits {
  return {
    ...(bits.execBefore === undefined ? {} : { execBefore: bits.execBefore }),
    ...(bits.execAfter === undefined ? {} : { execAfter: bits.execAfter }),
  };
}
