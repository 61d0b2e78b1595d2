import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import type { CommandChanges } from '../../../core/ports';
import { IgnoreRules } from '../search/filters';

// Where no copy-on-write view can be had (no unprivileged overlay, a file system that refuses to be
// a layer, macOS, Windows): the non-ignored files are listed before and after the command (size,
// mtime, mode; a walk of the workspace, its cost measured in the note) and what differs is named in
// the tool result. The command wrote in place, so these changes are not patches and Restore cannot
// bring them back: said plainly.

interface Seen {
  readonly size: number;
  readonly mtimeMs: number;
  readonly mode: number;
}

/** At most this many files are listed per scan (past it, the note says the scan was cut). */
export const SCAN_LIMIT = 200_000;

export interface Scan {
  readonly files: Map<string, Seen>;
  readonly complete: boolean;
  readonly ms: number;
}

async function walk(root: string, rel: string, rules: IgnoreRules, out: Map<string, Seen>): Promise<boolean> {
  const entries = await fs.readdir(nodePath.join(root, rel), { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (out.size >= SCAN_LIMIT) return false;
    const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
    if (entry.name === '.git' || entry.name === 'node_modules') continue;
    if (await rules.pathIgnored(child, '', entry.isDirectory())) continue;
    if (entry.isDirectory()) {
      if (!(await walk(root, child, rules, out))) return false;
    } else if (entry.isFile()) {
      const st = await fs.lstat(nodePath.join(root, child)).catch(() => null);
      if (st !== null) out.set(nodePath.join(root, child), { size: st.size, mtimeMs: st.mtimeMs, mode: st.mode });
    }
  }
  return true;
}

/** Lists the non-ignored files of the workspace folders. */
export async function scanFolders(roots: readonly string[]): Promise<Scan> {
  const started = Date.now();
  const files = new Map<string, Seen>();
  let complete = true;
  for (const root of roots) complete = (await walk(root, '', new IgnoreRules(root), files)) && complete;
  return { files, complete, ms: Date.now() - started };
}

/** What changed between two scans, as the change set's notes (nothing to apply: it is in the workspace already). */
export function scanChanges(before: Scan, after: Scan, why: string): CommandChanges {
  const changed: string[] = [];
  for (const [path, now] of after.files) {
    const was = before.files.get(path);
    if (was === undefined) changed.push(`A ${path}`);
    else if (was.size !== now.size || was.mtimeMs !== now.mtimeMs || was.mode !== now.mode) changed.push(`M ${path}`);
  }
  for (const path of before.files.keys()) if (!after.files.has(path)) changed.push(`D ${path}`);
  const notes = [
    `No copy-on-write view here (${why}): the command wrote in the workspace directly; a scan before and after it (${before.ms + after.ms} ms) finds what it changed. These changes are not patches: Restore cannot bring them back.`,
    ...(changed.length > 0
      ? [`Changed by the command: ${changed.slice(0, 50).join(', ')}${changed.length > 50 ? `, and ${changed.length - 50} more` : ''}.`]
      : []),
    ...(!before.complete || !after.complete ? [`The scan stopped at ${SCAN_LIMIT} files.`] : []),
  ];
  return { via: 'scan', files: [], refused: [], notes, discard: async () => undefined };
}
