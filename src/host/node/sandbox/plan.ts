import type { Stats } from 'node:fs';
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';
import { BUILTIN_PROTECTED_PATHS, protectedPathReason } from '../../../core/tools/protected-paths';
import { isInside } from '../path-rules';

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
  readonly proxy?: { readonly socket: string; takeRefusals(): string[]; connections?(): number };
  readonly home?: string;
  /** Folders of programs (PATH entries, the running Node's own): visible read-only even inside the home folder. */
  readonly programDirs?: readonly string[];
  /**
   * Where each command's copy-on-write view lives (one folder per call: overlay.ts): in the store's
   * area or this tool's state, hidden from commands; never in the workspace nor in /tmp.
   */
  readonly views?: string;
  /** Past this many files or bytes of non-ignored changes a command's change set is "too large to track". */
  readonly trackLimit?: { readonly files: number; readonly bytes: number };
  /** The workspace folders read-only (an MCP server without a copy-on-write view: its missing protected paths cannot be guarded). */
  readonly readOnlyRoots?: boolean;
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
  /** The person's own protected patterns (besides the built-in ones). */
  readonly extra: readonly string[];
  /** The workspace folders are read-only as a whole. */
  readonly readOnlyRoots?: boolean;
}

/** Thrown when a workspace holds something the sandbox cannot protect (the command does not run). */
export class SandboxRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxRefusal';
  }
}

export const GIT_RULE = '.git/ (git data: read-only in the sandbox; git reads work, git add/commit/checkout do not)';

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

function ruleOf(rel: string, extra: readonly string[]): string {
  const reason = protectedPathReason(rel, extra) ?? '';
  const pattern = /\(protected path (.*?)\)/.exec(reason)?.[1] ?? rel;
  return `protected path ${pattern}`;
}

/**
 * The protected paths that exist at one workspace folder's top: read-only in the command's view, so
 * a write there fails at once with EROFS (nothing is created for a missing one: a protected path a
 * command creates, at any depth, is refused when its change set is applied: capture.ts).
 */
function protectTop(root: string, extra: readonly string[], readOnly: ReadOnlyPath[]): void {
  const dotGit = nodePath.join(root, '.git');
  const git = lstatOrNull(dotGit);
  if (git?.isSymbolicLink()) throw symlinkRefusal(dotGit);
  if (git !== null) {
    readOnly.push({ path: dotGit, rule: GIT_RULE });
    const gitdir = git.isFile() ? gitdirOfFile(dotGit, root) : undefined;
    if (gitdir !== undefined) readOnly.push({ path: gitdir, rule: GIT_RULE });
  }
  const literals = [...BUILTIN_PROTECTED_PATHS, ...extra].map(literalOf).filter((l) => l !== undefined);
  for (const { name } of literals) {
    const path = nodePath.join(root, name);
    const st = lstatOrNull(path);
    if (st === null) continue;
    if (st.isSymbolicLink()) throw symlinkRefusal(path);
    if (!readOnly.some((r) => r.path === path)) readOnly.push({ path, rule: ruleOf(name, extra) });
  }
}

/** Works out the plan on disk: a few lstat calls per workspace folder, never a walk of it. */
export function planSandbox(request: SandboxRequest): SandboxPlan {
  const roots = request.roots.filter((r) => existsSync(r)).map((r) => realpathSync.native(r));
  const readOnly: ReadOnlyPath[] = [];
  for (const root of roots) protectTop(root, request.protectedPaths, readOnly);
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
    readOnly,
    hidden,
    ...(usableHome !== undefined ? { home: usableHome } : {}),
    homePaths,
    homePrograms: homePrograms(request.programDirs ?? [], [...(usableHome !== undefined ? [usableHome] : []), ...PRIVATE_DIRS], hidden),
    network: request.network,
    ...(request.proxy !== undefined && !request.network ? { proxySocket: request.proxy.socket } : {}),
    extra: request.protectedPaths,
    ...(request.readOnlyRoots === true ? { readOnlyRoots: true } : {}),
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
