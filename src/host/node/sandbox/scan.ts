import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import type { CommandChanges } from '../../../core/ports';
import { BUILTIN_PROTECTED_PATHS, protectedPathReason } from '../../../core/tools/protected-paths';
import { IgnoreRules } from '../search/filters';
import { literalOf } from './plan';

// Where no copy-on-write view can be had (no unprivileged overlay, a file system that refuses to be
// a layer, macOS, Windows): the non-ignored files are listed before and after the command (size,
// mtime, mode; a walk of the workspace, its cost measured in the note) and what differs is named in
// the tool result. The command wrote in place, so these changes are not patches and Restore cannot
// bring them back: said plainly. A protected path the command created (at a folder's top, ignored
// or not, or anywhere the scan sees) is moved out of the workspace into the views' folder and named
// as refused: nothing made a placeholder for it, so the command could write it, but it does not stay.

interface Seen {
  readonly size: number;
  readonly mtimeMs: number;
  readonly mode: number;
}

/** At most this many files are listed per scan (past it, the note says the scan was cut). */
export const SCAN_LIMIT = 200_000;

export interface Scan {
  readonly files: Map<string, Seen>;
  /** The protected paths named literally at each folder's top that exist (absolute). */
  readonly protectedTop: ReadonlySet<string>;
  readonly complete: boolean;
  readonly ms: number;
}

/** What the scan needs to guard protected paths: the person's own patterns, and where a created one is moved. */
export interface ScanGuard {
  readonly extra: readonly string[];
  /** A folder outside the workspace (the views' folder): created protected paths go there. */
  readonly quarantine: string;
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

async function protectedAtTop(roots: readonly string[], extra: readonly string[]): Promise<Set<string>> {
  const names = [...BUILTIN_PROTECTED_PATHS, ...extra].map(literalOf).filter((l) => l !== undefined);
  const found = new Set<string>();
  for (const root of roots)
    for (const { name } of names) {
      const path = nodePath.join(root, name);
      if ((await fs.lstat(path).catch(() => null)) !== null) found.add(path);
    }
  return found;
}

/** Lists the non-ignored files of the workspace folders, and which protected paths exist at their tops. */
export async function scanFolders(roots: readonly string[], extra: readonly string[] = []): Promise<Scan> {
  const started = Date.now();
  const files = new Map<string, Seen>();
  let complete = true;
  for (const root of roots) complete = (await walk(root, '', new IgnoreRules(root), files)) && complete;
  return { files, protectedTop: await protectedAtTop(roots, extra), complete, ms: Date.now() - started };
}

function relativeIn(roots: readonly string[], path: string): string | undefined {
  const root = roots.find((r) => path.startsWith(r + nodePath.sep));
  return root === undefined ? undefined : nodePath.relative(root, path).split(nodePath.sep).join('/');
}

/** Moves a path the command created out of the workspace (rename, or copy and remove across devices). */
async function moveOut(path: string, quarantine: string, index: number): Promise<string> {
  const target = nodePath.join(quarantine, String(index), nodePath.basename(path));
  await fs.mkdir(nodePath.dirname(target), { recursive: true, mode: 0o700 });
  try {
    await fs.rename(path, target);
  } catch {
    await fs.cp(path, target, { recursive: true });
    await fs.rm(path, { recursive: true, force: true });
  }
  return target;
}

/** Protected paths the command created, moved out of the workspace; each named with its rule and where it went. */
async function refuseCreatedProtected(
  before: Scan,
  after: Scan,
  roots: readonly string[],
  guard: ScanGuard,
): Promise<{ path: string; rule: string }[]> {
  const created = [...after.protectedTop].filter((p) => !before.protectedTop.has(p));
  for (const path of after.files.keys()) {
    const rel = relativeIn(roots, path);
    if (before.files.has(path) || rel === undefined || protectedPathReason(rel, guard.extra) === undefined) continue;
    if (!created.some((top) => path.startsWith(top + nodePath.sep))) created.push(path);
  }
  const refused: { path: string; rule: string }[] = [];
  for (const [i, path] of created.entries()) {
    const moved = await moveOut(path, nodePath.join(guard.quarantine, `blocked-${Date.now()}`), i).catch(() => undefined);
    const rule = `a protected path the command created without a copy-on-write view; ${moved !== undefined ? `moved out of the workspace to ${moved}` : 'it could not be moved out: remove it yourself'}`;
    refused.push({ path, rule });
  }
  return refused;
}

/**
 * What changed between two scans, as the change set's notes (nothing to apply: it is in the
 * workspace already); protected paths the command created are moved out and refused.
 */
export async function scanChanges(
  before: Scan,
  after: Scan,
  why: string,
  roots: readonly string[],
  guard: ScanGuard,
): Promise<CommandChanges> {
  const refused = await refuseCreatedProtected(before, after, roots, guard);
  const gone = new Set(refused.map((r) => r.path));
  const changed: string[] = [];
  for (const [path, now] of after.files) {
    if (gone.has(path) || refused.some((r) => path.startsWith(r.path + nodePath.sep))) continue;
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
  return { via: 'scan', files: [], refused, notes, discard: async () => undefined };
}
