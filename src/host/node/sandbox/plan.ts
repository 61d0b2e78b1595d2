import type { Dirent, Stats } from 'node:fs';
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, renameSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import { BUILTIN_PROTECTED_PATHS, protectedPathReason } from '../../../core/tools/protected-paths';
import { isInside } from '../path-rules';
import { makePlaceholder, releaseHold, takeHold, type Hold, type Placeholder } from './holds';

// What a sandboxed command may see and change, worked out on disk right before it starts. The
// rules come from the one list of protected paths (core/tools/protected-paths.ts) plus the
// person's `protectedPaths`; the sandboxes (bwrap.ts, seatbelt.ts) only translate a plan.

/** What the host asks of the sandbox for one command. */
export interface SandboxRequest {
  /** Workspace folders: writable, except the protected paths and `.git`. */
  readonly roots: readonly string[];
  /** Globs the person added to the built-in protected paths. */
  readonly protectedPaths: readonly string[];
  /** Never visible to a command: the checkpoint store, the editor's user settings, this tool's own config. */
  readonly hidden: readonly string[];
  /** Folders of the home folder a command may use (read-write), e.g. a package cache. */
  readonly homePaths: readonly string[];
  readonly network: boolean;
  /**
   * With the network off: the host's proxy (netproxy/), reached through a forwarder in the sandbox;
   * the command's HTTP(S) traffic leaves only through it.
   */
  readonly proxy?: { readonly socket: string; takeRefusals(): string[] };
  readonly home?: string;
  /** Folders of programs (PATH entries, the running Node's own): visible read-only even inside the home folder. */
  readonly programDirs?: readonly string[];
}

/** One path mounted read-only, and the rule that makes it so (for the tool result). */
export interface ReadOnlyPath {
  readonly path: string;
  readonly rule: string;
}

export interface SandboxPlan {
  readonly roots: readonly string[];
  readonly readOnly: readonly ReadOnlyPath[];
  /** Existing paths covered by an empty tmpfs (folders) or /dev/null (files). */
  readonly hidden: readonly { path: string; dir: boolean }[];
  readonly home?: string;
  readonly homePaths: readonly string[];
  /** Program folders inside the hidden home folder, bound read-only so the person's tools still run. */
  readonly homePrograms: readonly string[];
  readonly network: boolean;
  /** The host proxy's Unix socket, bound into the sandbox for the forwarder (network off otherwise). */
  readonly proxySocket?: string;
  /** The holds on the workspace folders' placeholders for missing protected paths (holds.ts); released after the command. */
  readonly holds: readonly Hold[];
  /** The person's own protected patterns (besides the built-in ones). */
  readonly extra: readonly string[];
  /** Every protected path the walk found before the command (whatever covers it). */
  readonly seen: readonly string[];
  /** False when a folder held more folders than the walk reads: nested paths past them are unguarded. */
  readonly walkComplete: boolean;
  /** When the plan was made (ms since the epoch): a path born before it was not made by the command. */
  readonly startedAt: number;
}

/** Thrown when a workspace holds something the sandbox cannot protect (the command does not run). */
export class SandboxRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxRefusal';
  }
}

export const GIT_RULE = '.git/ (git data: read-only in the sandbox; git reads work, git add/commit/checkout do not)';
/** At most this many folders are walked to find nested protected paths. */
export const WALK_LIMIT = 5000;
const SKIP_WALK = new Set(['node_modules']);

/** The literal path a pattern names at a folder's top (e.g. `**\/.vscode{,/**}` -> .vscode, a folder), if it is one. */
export function literalOf(pattern: string): { name: string; dir: boolean } | undefined {
  let name = pattern.trim().replace(/\\/g, '/').replace(/^\.\//, '');
  while (name.startsWith('**/')) name = name.slice(3);
  let dir = false;
  for (const tail of ['{,/**}', '/**', '/']) {
    if (name.endsWith(tail)) {
      name = name.slice(0, -tail.length);
      dir = true;
    }
  }
  if (name === '' || /[*?[\]{}!]/.test(name) || name.split('/').some((part) => part === '..' || part === '')) return undefined;
  return { name, dir };
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function symlinkRefusal(path: string): SandboxRefusal {
  let target = '?';
  try {
    target = realpathSync.native(path);
  } catch {
    // a dangling link: its target is named as '?'
  }
  return new SandboxRefusal(
    `${path} is a protected path and a symbolic link (to ${target}); the sandbox cannot hold a link read-only (the command could replace it), so the command did not run. Replace the link with the folder or file itself, or switch the sandbox off (agentCheckpoints.sandbox: off, --no-sandbox).`,
  );
}

/** The git directory a `.git` file names (`gitdir: ...`), when it lies inside the workspace folder. */
function gitdirOfFile(dotGit: string, root: string): string | undefined {
  const text = readFileSync(dotGit, 'utf8').slice(0, 4096);
  const match = /^gitdir:\s*(.+)$/m.exec(text);
  if (!match) return undefined;
  const target = nodePath.resolve(root, match[1]!.trim());
  if (!existsSync(target)) return undefined;
  const real = realpathSync.native(target);
  return isInside(real, root) ? real : undefined;
}

/** A protected path found in a folder: where, its rule, and whether it is a symbolic link. */
interface Found extends ReadOnlyPath {
  readonly link: boolean;
}

/**
 * The protected paths under `root` at any depth (a bounded walk that does not follow links and skips
 * node_modules): those of the patterns, and nested git folders (a sub-repository's hooks and config).
 */
function protectedUnder(root: string, extra: readonly string[]): { found: Found[]; complete: boolean } {
  const found: Found[] = [];
  const queue = [''];
  let folders = 0;
  while (queue.length > 0 && folders++ < WALK_LIMIT) {
    const rel = queue.shift()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(nodePath.join(root, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const path = nodePath.join(root, child);
      if (entry.name === '.git') {
        if (rel !== '') found.push({ path, rule: GIT_RULE, link: entry.isSymbolicLink() });
      } else if (protectedPathReason(child, extra) !== undefined)
        found.push({ path, rule: ruleOf(child, extra), link: entry.isSymbolicLink() });
      else if (entry.isDirectory() && !SKIP_WALK.has(entry.name)) queue.push(child);
    }
  }
  return { found, complete: queue.length === 0 };
}

/**
 * Sets aside the protected paths a command created where the sandbox could not hold a placeholder
 * (deeper than a folder's top, or a new name such as `x.code-workspace`): a command may not create
 * them. They are renamed (`<name>.sandbox-blocked-<time>`), never deleted, so nothing the person
 * made meanwhile is lost; a path the walk before the command saw, or (when that walk was cut short)
 * one born before the command, is left alone. Returns what it set aside.
 */
export function setAsideCreatedProtected(plan: SandboxPlan): string[] {
  const moved: string[] = [];
  const seen = new Set(plan.seen);
  for (const root of plan.roots) {
    for (const found of protectedUnder(root, plan.extra).found) {
      if (seen.has(found.path) || plan.readOnly.some((r) => isInside(found.path, r.path))) continue;
      if (!plan.walkComplete && !bornSince(found.path, plan.startedAt)) continue;
      const aside = `${found.path}.sandbox-blocked-${Date.now().toString(36)}`;
      try {
        renameSync(found.path, aside);
        moved.push(`${nodePath.relative(root, found.path)} (${found.rule}) -> ${nodePath.basename(aside)}`);
      } catch {
        // left as it is; the file tools still ask before they touch it
      }
    }
  }
  return moved;
}

/** Whether the path was born at or after `since` (false when the file system does not say). */
function bornSince(path: string, since: number): boolean {
  const born = lstatOrNull(path)?.birthtimeMs ?? 0;
  return born > 0 && born >= since - 1000;
}

function ruleOf(rel: string, extra: readonly string[]): string {
  const reason = protectedPathReason(rel, extra) ?? '';
  const pattern = /\(protected path (.*?)\)/.exec(reason)?.[1] ?? rel;
  return `protected path ${pattern}`;
}

/** Makes an empty placeholder for a missing protected path (false when its folder is missing); a path made meanwhile is protected as it is. */
function heldPlaceholder(path: string, dir: boolean, made: Placeholder[]): boolean {
  if (!existsSync(nodePath.dirname(path))) return false;
  try {
    made.push(makePlaceholder(path, dir));
  } catch {
    return lstatOrNull(path) !== null;
  }
  return true;
}

/**
 * The protected paths at one workspace folder's top, placeholders made for the missing ones (run
 * under the folder's hold lock: holds.ts). Returns the placeholders it made.
 */
function protectTop(root: string, extra: readonly string[], readOnly: ReadOnlyPath[]): Placeholder[] {
  const made: Placeholder[] = [];
  const dotGit = nodePath.join(root, '.git');
  const git = lstatOrNull(dotGit);
  if (git?.isSymbolicLink()) throw symlinkRefusal(dotGit);
  if (git !== null && git !== undefined) {
    readOnly.push({ path: dotGit, rule: GIT_RULE });
    const gitdir = git.isFile() ? gitdirOfFile(dotGit, root) : undefined;
    if (gitdir !== undefined) readOnly.push({ path: gitdir, rule: GIT_RULE });
  } else if (heldPlaceholder(dotGit, true, made)) {
    // No repository yet: an empty read-only .git (git's discovery passes over an empty one), so a
    // command cannot `git init` a repository whose config (core.fsmonitor) the editor's git would run.
    readOnly.push({ path: dotGit, rule: GIT_RULE });
  }
  const literals = [...BUILTIN_PROTECTED_PATHS, ...extra].map(literalOf).filter((l) => l !== undefined);
  for (const { name, dir } of literals) {
    const path = nodePath.join(root, name);
    const st = lstatOrNull(path);
    if (st?.isSymbolicLink()) throw symlinkRefusal(path);
    if (st === null && !heldPlaceholder(path, dir, made)) continue;
    if (!readOnly.some((r) => r.path === path)) readOnly.push({ path, rule: ruleOf(name, extra) });
  }
  return made;
}

/** The nested protected paths of one workspace folder (a bounded walk). */
function protectNested(
  root: string,
  extra: readonly string[],
  plan: { readOnly: ReadOnlyPath[]; seen: string[]; complete: boolean },
): void {
  const walk = protectedUnder(root, extra);
  plan.complete &&= walk.complete;
  for (const found of [...walk.found, ...rememberedUnder(root, walk.found)]) {
    plan.seen.push(found.path);
    if (plan.readOnly.some((r) => isInside(found.path, r.path))) continue;
    if (found.link) throw symlinkRefusal(found.path);
    plan.readOnly.push({ path: found.path, rule: found.rule });
  }
}

/** Ends the plan's holds: the last command of a workspace folder to end removes its placeholders. */
export function releasePlan(plan: SandboxPlan): void {
  for (const hold of plan.holds) releaseHold(hold);
}

/** Nested protected paths found by earlier walks in this process, per workspace folder. */
const remembered = new Map<string, Map<string, string>>();

/**
 * The nested protected paths an earlier walk found that this one did not (still there, e.g. past
 * thousands of folders a command made to push them out of the walk's reach); remembers the new ones.
 * Protection only grows within a process.
 */
function rememberedUnder(root: string, found: readonly Found[]): Found[] {
  const known = remembered.get(root) ?? new Map<string, string>();
  remembered.set(root, known);
  const now = new Set(found.map((f) => f.path));
  const back: Found[] = [];
  for (const [path, rule] of known) {
    if (now.has(path)) continue;
    const st = lstatOrNull(path);
    if (st === null) known.delete(path);
    else back.push({ path, rule, link: st.isSymbolicLink() });
  }
  for (const f of found) known.set(f.path, f.rule);
  return back;
}

/**
 * Works out the plan on disk: takes a hold on each workspace folder and makes placeholders for its
 * missing protected paths (releasePlan ends the holds; the last one out removes the placeholders).
 */
export function planSandbox(request: SandboxRequest): SandboxPlan {
  const roots = request.roots.filter((r) => existsSync(r)).map((r) => realpathSync.native(r));
  const startedAt = Date.now();
  const built = { readOnly: [] as ReadOnlyPath[], seen: [] as string[], complete: true };
  const holds: Hold[] = [];
  try {
    for (const root of roots) holds.push(takeHold(root, () => protectTop(root, request.protectedPaths, built.readOnly)));
    for (const root of roots) protectNested(root, request.protectedPaths, built);
  } catch (error) {
    for (const hold of holds) releaseHold(hold);
    throw error;
  }
  const hidden = request.hidden
    .filter((p) => existsSync(p))
    .map((p) => realpathSync.native(p))
    .filter((p) => !roots.some((root) => isInside(root, p)))
    .map((p) => ({ path: p, dir: statSync(p).isDirectory() }));
  const home = request.home !== undefined && existsSync(request.home) ? realpathSync.native(request.home) : undefined;
  const usableHome = home !== undefined && home !== '/' && !roots.some((root) => isInside(home, root)) ? home : undefined;
  const homePaths = request.homePaths
    .map((p) => (usableHome !== undefined ? nodePath.resolve(usableHome, p.replace(/^~\//, '')) : p))
    .filter((p) => existsSync(p))
    .map((p) => realpathSync.native(p))
    .filter((p) => usableHome !== undefined && isInside(p, usableHome) && p !== usableHome)
    .filter((p) => !hidden.some((h) => isInside(h.path, p) || isInside(p, h.path)));
  return {
    roots,
    readOnly: built.readOnly,
    hidden,
    ...(usableHome !== undefined ? { home: usableHome } : {}),
    homePaths,
    homePrograms: homePrograms(request.programDirs ?? [], [...(usableHome !== undefined ? [usableHome] : []), ...PRIVATE_DIRS], hidden),
    network: request.network,
    ...(request.proxy !== undefined && !request.network ? { proxySocket: request.proxy.socket } : {}),
    holds,
    extra: request.protectedPaths,
    seen: built.seen,
    walkComplete: built.complete,
    startedAt,
  };
}

/** Folders every sandbox replaces with an empty private one (bwrap.ts mounts them first). */
export const PRIVATE_DIRS = ['/tmp', '/var/tmp', '/run/user', '/dev/shm'];

/**
 * The program folders (PATH entries, the running Node's, a server's own) that lie in the hidden home
 * folder or a private system folder such as /tmp, with the `lib`
 * beside a `bin` (where nvm's npm, pip's user packages and the like live): read-only, never the home
 * folder itself nor anything hidden.
 */
function homePrograms(dirs: readonly string[], covered: readonly string[], hidden: readonly { path: string }[]): string[] {
  const out = new Set<string>();
  for (const dir of dirs) {
    const withLib = nodePath.basename(dir) === 'bin' ? [dir, nodePath.join(nodePath.dirname(dir), 'lib')] : [dir];
    for (const path of withLib) {
      if (!nodePath.isAbsolute(path) || !existsSync(path)) continue;
      const real = realpathSync.native(path);
      const under = covered.find((dir) => isInside(real, dir));
      if (under === undefined || real === under || hidden.some((h) => isInside(real, h.path) || isInside(h.path, real))) continue;
      out.add(real);
    }
  }
  return [...out];
}

/** Why a write failed, for the tool result: the read-only rules the output names (all of them when it names none). */
export function readOnlyNote(plan: SandboxPlan, output: string, sandbox: string): string | undefined {
  if (!/read-only file system|EROFS|operation not permitted/i.test(output)) return undefined;
  const named = plan.readOnly.filter((r) => output.includes(nodePath.basename(r.path)));
  const rules = (named.length > 0 ? named : plan.readOnly).map((r) => {
    const root = plan.roots.find((root) => isInside(r.path, root));
    return `  ${root !== undefined ? nodePath.relative(root, r.path) || '.' : r.path}: ${r.rule}`;
  });
  return [
    `The command ran in a sandbox (${sandbox}). These paths are read-only there:`,
    ...rules,
    'The home folder (except agentCheckpoints.commandHomePaths), the checkpoint store and the editor settings are not visible, and /tmp is private.',
    'To change a protected file, use write_file or edit_file: the person approves each such write. To let commands write there, the person can switch the sandbox off (setting agentCheckpoints.sandbox: off, or --no-sandbox in the CLI).',
  ].join('\n');
}
