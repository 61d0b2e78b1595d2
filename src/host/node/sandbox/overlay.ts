import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import * as nodePath from 'node:path';
import { z } from 'zod';
import { isInside } from '../path-rules';
import { isAlive } from '../process-alive';
import { idsFrom, mappedText, mapsOwner, ownIdsOnly, systemIdFacts, type ViewIds } from './subids';

// A copy-on-write view of the workspace for one command (Linux): `unshare -Urm` gives a user and
// mount namespace where the kernel's overlayfs mounts each workspace folder over itself (lower = the
// folder, upper + work = a per-call folder in the store's area), then bubblewrap runs nested inside
// as before. The command's writes land in the upper folder only; capture.ts turns it into the
// change set. Nothing is created in the workspace. After the command, still inside the namespace,
// the wrapper lists the merged view of every folder the upper holds (`merged.<i>`): against the
// lower folder it tells what was deleted, opaque folders included, without reading extended attributes.
// The namespace maps the person's own ids plus their subordinate ids where they have some (subids.ts).

/** Exit status of the wrapper when a folder could not be mounted: the command did not run. */
export const NO_VIEW_EXIT = 111;
export const NO_VIEW_MARK = 'agent-checkpoints: no copy-on-write view';

/** One workspace folder's layer. */
export interface Layer {
  readonly root: string;
  readonly upper: string;
  readonly work: string;
  /** NUL-separated listing of the merged view, written by the wrapper after the command. */
  readonly merged: string;
}

/** One call's view: its folder (removed by discardView) and a layer per workspace folder. */
export interface View {
  readonly dir: string;
  readonly layers: readonly Layer[];
  /** When the view was made (ms): a lower file changed since may hold the person's edit. */
  readonly startedAt: number;
}

/** Paths overlayfs options cannot carry (`,` and `:` separate options and layers). */
const UNMOUNTABLE = /[,:\\\n]/;

const WRAPPER = [
  'n=$1; shift',
  'i=0',
  // Mount every layer (lower, upper, work, listing file), then run the command after "--".
  'while [ "$i" -lt "$n" ]; do',
  '  mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3,userxattr" "$1" 2>/dev/null ||',
  `    { echo "${NO_VIEW_MARK} of $1" >&2; exit ${NO_VIEW_EXIT}; }`,
  '  eval "r$i=\\$1 u$i=\\$2 m$i=\\$4"; shift 4; i=$((i+1))',
  'done',
  'shift',
  "trap 'got=1' TERM INT HUP",
  '"$@"; code=$?',
  'i=0',
  'while [ "$i" -lt "$n" ]; do',
  '  eval "r=\\$r$i u=\\$u$i m=\\$m$i"; has=',
  // Only an upper folder with folders in it needs the listing (a command that made no folder is spared three processes).
  '  for d in "$u"/*/ "$u"/.[!.]*/ "$u"/..?*/; do if [ -d "$d" ]; then has=1; break; fi; done',
  '  [ -n "$has" ] && (cd "$u" && find . -mindepth 1 -type d -print0 | (cd "$r" && xargs -0 -r sh -c \'exec find "$@" -mindepth 1 -maxdepth 1 -print0\' sh)) > "$m" 2>/dev/null',
  '  i=$((i+1))',
  'done',
  'exit $code',
].join('\n');

/**
 * The unshare launch wrapping `file args` (bubblewrap's) in the view. Through `setpriv --pdeathsig`
 * where there is one: the wrapper dies with the host (a host killed mid-command), and bubblewrap
 * (--die-with-parent) with it, so no command outlives a host and writes into a view being swept.
 */
export function viewLaunch(unshare: string, view: View, file: string, args: readonly string[]): { file: string; args: string[] } {
  const layers = view.layers.flatMap((l) => [l.root, l.upper, l.work, l.merged]);
  const wrapped = [...viewIds().args, '--', '/bin/sh', '-c', WRAPPER, 'sh', String(view.layers.length), ...layers, '--', file, ...args];
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
  return setpriv !== undefined ? { file: setpriv, args: ['--pdeathsig', 'KILL', unshare, ...wrapped] } : { file: unshare, args: wrapped };
}

/** The mark of a call's views in their folder names (ids the file system cannot carry are hashed). */
function callMark(callId: string): string {
  return /^[A-Za-z0-9_]{1,80}$/.test(callId) ? callId : createHash('sha256').update(callId).digest('hex').slice(0, 32);
}

const ViewFile = z.object({ roots: z.array(z.string()), startedAt: z.number() });

/**
 * A fresh per-call folder under `views`, named by this process (sweepViews removes those of dead
 * processes) and by the call it serves (recoverView finds it when the host died before the call's
 * result was recorded). `view.json` names the workspace folders of its layers.
 */
export function makeView(views: string, roots: readonly string[], callId?: string): View {
  const mark = callId !== undefined ? `-c${callMark(callId)}` : '';
  const dir = nodePath.join(views, `${process.pid}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}${mark}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const startedAt = Date.now();
  writeFileSync(nodePath.join(dir, 'view.json'), JSON.stringify({ roots, startedAt }));
  inUse.add(dir);
  return { dir, layers: layersOf(dir, roots, true), startedAt };
}

function layersOf(dir: string, roots: readonly string[], make: boolean): Layer[] {
  return roots.map((root, i) => {
    const layer = {
      root,
      upper: nodePath.join(dir, `u${i}`),
      work: nodePath.join(dir, `w${i}`),
      merged: nodePath.join(dir, `merged.${i}`),
    };
    if (make) {
      mkdirSync(layer.upper);
      mkdirSync(layer.work);
    }
    return layer;
  });
}

/** Views whose command runs or is being captured in this process: never taken by recoverView. */
const inUse = new Set<string>();

/** The view's command and capture are over: the change set is its caller's now (recoverView may take it once the caller is gone). */
export function settledView(view: View): void {
  inUse.delete(view.dir);
}

/** Marks a view its process gave up (its apply failed: a closing window): recoverView may take it while that process still lives. */
export function releaseView(dir: string): void {
  inUse.delete(dir);
  try {
    writeFileSync(nodePath.join(dir, RELEASED), '');
  } catch {
    // the view is gone: nothing to settle from it
  }
}

const RELEASED = 'released';

/**
 * The view left for `callId` by a dead process, by one that released it, or by this one when its
 * call's result was never recorded (a run paused by a storage failure), if any.
 */
export function recoverView(views: string, callId: string): View | undefined {
  const mark = `-c${callMark(callId)}`;
  const names = existsSync(views) ? readdirSync(views) : [];
  for (const name of names) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    const dir = nodePath.join(views, name);
    const owned = pid !== process.pid && isAlive(pid) && !existsSync(nodePath.join(dir, RELEASED));
    if (!name.endsWith(mark) || inUse.has(dir) || owned) continue;
    try {
      const file = ViewFile.parse(JSON.parse(readFileSync(nodePath.join(dir, 'view.json'), 'utf8')));
      return { dir, layers: layersOf(dir, file.roots, false), startedAt: file.startedAt };
    } catch {
      discardView(dir); // damaged: nothing to settle from it
    }
  }
  return undefined;
}

/**
 * Removes a call's folder (overlayfs leaves its work folder unreadable: made writable first). A
 * folder copied up from one of a subordinate id's is not the person's to empty: the rest is removed
 * inside a namespace of the view's ids, where the person may.
 */
export function discardView(dir: string): void {
  inUse.delete(dir);
  try {
    for (const name of readdirSync(dir)) if (name.startsWith('w')) openUp(nodePath.join(dir, name));
    rmSync(dir, { recursive: true, force: true });
  } catch {
    const mapped = viewIds();
    const unshare = unshareOf();
    if (mapped.args.length > 1 && unshare !== undefined && existsSync(dir))
      spawnSync(unshare, [...mapped.args, '--', 'rm', '-rf', '--', dir], { stdio: 'ignore', timeout: 30_000 });
    // else (or if that failed too) a later sweep takes it
  }
}

function openUp(dir: string): void {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) openUp(nodePath.join(dir, entry.name));
}

/** Removes the views of processes that are gone (a host killed mid-command): bounded disk. */
export function sweepViews(views: string): void {
  let names: string[];
  try {
    names = readdirSync(views);
  } catch {
    return;
  }
  for (const name of names) {
    const [, pid, born] = /^(\d+)-([0-9a-z]+)-/.exec(name) ?? [];
    // A call's view waits for its run's resume to settle it (recoverView), a week at most.
    // (The mark follows the random part: a random part that starts with `c` is no mark.)
    const waiting = /^\d+-[0-9a-z]+-[0-9a-f]{8}-c[0-9A-Za-z_]+$/.test(name) && Date.now() - parseInt(born ?? '0', 36) < KEEP_CALL_VIEW_MS;
    if (pid !== undefined && Number(pid) !== process.pid && !isAlive(Number(pid)) && !waiting) discardView(nodePath.join(views, name));
  }
}

/** How long the view of a call cut by its host's end waits for the run to be resumed. */
export const KEEP_CALL_VIEW_MS = 7 * 24 * 3600 * 1000;

/** Why no view can be had for these folders here, or undefined when one can (tried once per views folder). */
export function overlayProblem(views: string, roots: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env['AGENT_CHECKPOINTS_NO_OVERLAY'] === '1') return 'AGENT_CHECKPOINTS_NO_OVERLAY=1 is set';
  const inside = roots.find((root) => isInside(views, root));
  if (inside !== undefined)
    return `the folder of views (${views}) lies inside the workspace folder ${inside} (a store inside the workspace)`;
  const odd = roots.find((root) => UNMOUNTABLE.test(root) || UNMOUNTABLE.test(views));
  if (odd !== undefined) return `a path holds a character an overlay mount cannot name (",", ":" or "\\"): ${odd}`;
  return trial(views) ?? foreignOwner(roots);
}

/** What a command printed when it could not change a file of another owner in its view. */
const EOVERFLOW_TEXT = /Value too large for defined data type|EOVERFLOW/;

/** Why later commands go without a view, when `output` shows a copy-up refused for another owner's file; else undefined. */
export function foreignCopyUp(output: string): string | undefined {
  if (!EOVERFLOW_TEXT.test(output)) return undefined;
  return `a file or folder of another owner (uid or gid) could not be changed in the copy-on-write view (EOVERFLOW: its user namespace maps ${mappedText(viewIds())})`;
}

/**
 * Why no view fits folders whose uid or gid the view does not map (a group-shared folder, one a
 * container made as root beyond the person's subordinate ids): copy-up of their files fails with
 * EOVERFLOW. Only the folders themselves are looked at (never a walk): a file of such an owner
 * deeper is found by the command's error (foreignCopyUp).
 */
function foreignOwner(roots: readonly string[]): string | undefined {
  const mapped = viewIds();
  for (const root of roots) {
    const st = lstatOrNull(root);
    if (st !== null && !mapsOwner(mapped, st.uid, st.gid))
      return `the workspace folder ${root} belongs to another owner (uid ${st.uid}, gid ${st.gid}; the view's user namespace maps ${mappedText(mapped)}): its files cannot be copied up (EOVERFLOW)`;
  }
  return undefined;
}

let ids: ViewIds | undefined;

/** The ids of every view of this process (read once; the trial drops the subordinate ones if newuidmap refuses them). */
function viewIds(): ViewIds {
  return (ids ??= idsFrom(systemIdFacts()));
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

const trials = new Map<string, string | undefined>();

function trial(views: string): string | undefined {
  if (trials.has(views)) return trials.get(views);
  const unshare = unshareOf();
  let problem: string | undefined = unshare === undefined ? 'unshare (util-linux) was not found' : undefined;
  if (unshare !== undefined) {
    let refused = trialMount(unshare, views, viewIds());
    // newuidmap refused the subordinate ranges (stale /etc/subuid, a helper without its setuid bit): the person's own ids only.
    if (refused !== undefined && viewIds().args.length > 1) {
      ids = ownIdsOnly(viewIds(), refused);
      refused = trialMount(unshare, views, ids);
    }
    if (refused !== undefined) problem = `an unprivileged overlay mount is refused here (${refused})`;
  }
  trials.set(views, problem);
  return problem;
}

/** One mount of a view with these ids and a `true` in it; undefined when it worked, else what was said. */
function trialMount(unshare: string, views: string, mapping: ViewIds): string | undefined {
  const view = makeTrialView(views);
  const run = spawnSync(
    unshare,
    [...mapping.args, '--', '/bin/sh', '-c', WRAPPER, 'sh', '1', view.lower, view.upper, view.work, view.merged, '--', '/bin/true'],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000 },
  );
  discardView(view.dir);
  return run.status === 0 ? undefined : run.stderr?.toString().trim() || `exit ${run.status}`;
}

function makeTrialView(views: string): { dir: string; lower: string; upper: string; work: string; merged: string } {
  const dir = nodePath.join(views, `${process.pid}-trial-${randomBytes(4).toString('hex')}`);
  const parts = {
    dir,
    lower: nodePath.join(dir, 'l'),
    upper: nodePath.join(dir, 'u'),
    work: nodePath.join(dir, 'w'),
    merged: nodePath.join(dir, 'm'),
  };
  for (const d of [parts.lower, parts.upper, parts.work]) mkdirSync(d, { recursive: true, mode: 0o700 });
  writeFileSync(nodePath.join(parts.lower, 'f'), '');
  return parts;
}

let unshareFound: string | undefined | null = null;

export function unshareOf(): string | undefined {
  if (unshareFound === null) unshareFound = ['/usr/bin/unshare', '/bin/unshare'].find((p) => existsSync(p));
  return unshareFound;
}
