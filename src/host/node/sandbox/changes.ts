import { promises as fs, type Stats } from 'node:fs';
import * as nodePath from 'node:path';
import type { CommandChanges, CommandFileChange } from '../../../core/ports';
import type { Captured, Entry } from './capture';
import { discardView, releaseView, type View } from './overlay';

// From a captured view to what run_command applies: the tracked files become CommandFileChanges
// (core applies them as patches, checked against the live content); ignored paths, and everything
// of a change set too large to track, are placed in the workspace here, without patches.

const isExecutable = (mode: number): boolean => (mode & 0o111) !== 0;

/** Default bound of a change set tracked as patches (`SandboxRequest.trackLimit`). */
export const DEFAULT_TRACK_LIMIT: { readonly files: number; readonly bytes: number } = { files: 2000, bytes: 50 * 1024 * 1024 };

/** Whether every folder above `rel` is a real folder inside the root (made when missing); false for a link or a file on the way. */
async function safeParents(root: string, rel: string): Promise<boolean> {
  const parts = rel.split('/').slice(0, -1);
  let at = root;
  for (const part of parts) {
    at = nodePath.join(at, part);
    const st = await fs.lstat(at).catch(() => null);
    if (st === null) await fs.mkdir(at);
    else if (!st.isDirectory()) return false;
  }
  return true;
}

/**
 * Puts one entry of the view in the workspace directly (ignored paths; a change set too large to
 * track). `copy`: the view stays mounted (an MCP server's), so its upper file is copied, never moved.
 */
async function place(entry: Entry, copy: boolean): Promise<boolean> {
  const target = nodePath.join(entry.root, entry.rel);
  if (!(await safeParents(entry.root, entry.rel))) return false;
  const there = await fs.lstat(target).catch(() => null);
  if (entry.kind === 'delete') {
    if (there !== null && !there.isDirectory()) await fs.unlink(target);
    return true;
  }
  if (entry.kind === 'mode') {
    await fs.chmod(target, entry.mode & 0o7777);
    return true;
  }
  if (entry.files !== undefined) return placeFolder(entry, there, copy);
  if (there?.isDirectory()) return false;
  if (entry.link !== undefined) {
    if (there !== null) await fs.unlink(target);
    await fs.symlink(entry.link, target);
    return true;
  }
  if (copy) await fs.copyFile(entry.upper!, target);
  else
    await fs.rename(entry.upper!, target).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EXDEV') throw error;
      await fs.copyFile(entry.upper!, target);
    });
  await fs.chmod(target, entry.mode & 0o7777);
  return true;
}

/** A new folder whole: one rename (a copy across file systems, or when the view stays); merged into a folder made meanwhile. */
async function placeFolder(entry: Entry, there: Stats | null, copy: boolean): Promise<boolean> {
  const target = nodePath.join(entry.root, entry.rel);
  if (there !== null && !there.isDirectory()) return false;
  if (there === null && !copy) {
    const moved = await fs.rename(entry.upper!, target).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EXDEV' && error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
        return false;
      },
    );
    if (moved) return true;
  }
  await fs.cp(entry.upper!, target, { recursive: true, force: true, verbatimSymlinks: true });
  return true;
}

/** Places entries, deletions first; the summary line (files, bytes, top folders), or undefined for none. */
async function placeAll(entries: readonly Entry[], what: string, copy: boolean): Promise<string[]> {
  if (entries.length === 0) return [];
  const ordered = [...entries.filter((e) => e.kind === 'delete'), ...entries.filter((e) => e.kind !== 'delete')];
  const failed: string[] = [];
  let bytes = 0;
  let paths = 0;
  for (const entry of ordered) {
    paths += entry.files ?? 1;
    bytes += entry.size;
    const ok = await place(entry, copy).catch(() => false);
    if (!ok) failed.push(entry.rel);
  }
  const tops = [...new Set(entries.map((e) => e.rel.split('/')[0]!))];
  const shown = tops.slice(0, 5).join(', ') + (tops.length > 5 ? `, and ${tops.length - 5} more` : '');
  return [
    `${what}: ${paths} paths (${bytes} bytes) placed in the workspace without patches (not restorable), under: ${shown}.`,
    ...(failed.length > 0
      ? [`Not placed (a file, folder or link in the way): ${failed.slice(0, 10).join(', ')}${failed.length > 10 ? ' ...' : ''}.`]
      : []),
  ];
}

function fileChange(entry: Entry): CommandFileChange {
  const path = nodePath.join(entry.root, entry.rel);
  return {
    path,
    kind: entry.kind === 'delete' ? 'delete' : 'write',
    beforeHash: entry.beforeHash,
    ...(entry.conflict !== undefined ? { conflict: entry.conflict } : {}),
    binary: entry.binary,
    ...(entry.kind !== 'delete' ? { executable: isExecutable(entry.mode) } : {}),
    content: async () => new Uint8Array(await fs.readFile(entry.upper!)),
  };
}

/** The mode-only entries whose executable bit flips against the workspace's file: patches (the workspace applies the bit). */
async function execFlips(modes: readonly Entry[]): Promise<Entry[]> {
  const flips: Entry[] = [];
  for (const entry of modes) {
    const live = await fs.stat(nodePath.join(entry.root, entry.rel)).catch(() => null);
    if (live !== null && isExecutable(live.mode) !== isExecutable(entry.mode)) flips.push(entry);
  }
  return flips;
}

/**
 * The change set of a captured view: places what is not tracked, hands the rest to run_command.
 * `live`: the view stays mounted after (an MCP server's): its files are copied out, and `discard`
 * leaves the view in place.
 */
export async function changeSetOf(
  view: View,
  captured: Captured,
  limit: { readonly files: number; readonly bytes: number } = DEFAULT_TRACK_LIMIT,
  live = false,
): Promise<CommandChanges> {
  const tracked = captured.tracked.filter((e) => e.kind !== 'mode');
  const modes = captured.tracked.filter((e) => e.kind === 'mode');
  const bytes = tracked.reduce((sum, e) => sum + e.size, 0);
  const tooLarge = tracked.length > limit.files || bytes > limit.bytes;
  // A chmod that flips the executable bit is a mode-only patch; other mode changes (g+x of an executable) are placed.
  const flips = tooLarge ? [] : await execFlips(modes);
  const notes = [
    ...(await placeAll(captured.ignored, 'Ignored paths (the workspace ignore rules, node_modules)', live)),
    ...(tooLarge
      ? await placeAll(
          tracked.filter((e) => e.conflict === undefined),
          `Too large to track (${tracked.length} files, ${bytes} bytes; the bound is ${limit.files} files or ${limit.bytes} bytes)`,
          live,
        )
      : []),
  ];
  for (const entry of modes.filter((e) => e.conflict === undefined && !flips.includes(e)))
    if (await place(entry, live).catch(() => false))
      notes.push(
        `mode changed: ${entry.rel} (${(entry.mode & 0o777).toString(8)}; ${tooLarge ? 'too large to track' : 'patches hold the executable bit only'}: not restorable)`,
      );
  return {
    via: 'view',
    files: tooLarge ? [] : [...tracked, ...flips].map(fileChange),
    refused: captured.refused,
    notes,
    // Held by patches whole: nothing placed without one (ignored paths, too large, a mode change other than the executable bit).
    ...(captured.ignored.length === 0 && !tooLarge && modes.every((e) => flips.includes(e)) ? { allInFiles: true as const } : {}),
    discard: async () => {
      // What the command removed whole goes once the files in it were applied (a folder the person filled meanwhile stays).
      for (const folder of captured.folders) await fs.rmdir(folder).catch(() => undefined);
      if (!live) discardView(view.dir);
    },
    release: () => releaseView(view.dir),
  };
}
