import type { LiveFile, Workspace } from '../ports';
import { liveExec } from './exec-bit';
import { ABSENT, type LiveState, type Patch } from './schema';

type Hashes = Pick<Patch, 'beforeHash' | 'afterHash'>;
type Sides = Hashes & Pick<Patch, 'execBefore' | 'execAfter'>;

/** A side's executable bit holds live: the side names none, the host knows no modes (undefined), or it is the live bit. */
const bitHolds = (side: boolean | undefined, live: boolean | null | undefined): boolean =>
  side === undefined || live === undefined || live === side;

/**
 * State of a live hash (`absent` when the file does not exist) and, for a patch that changes the
 * executable bit, the live bit (undefined: not read or not known) against the patch's two sides.
 * A side is live when its bytes are and its bit is (a mode-only patch: the same bytes, the bit decides).
 */
export function classifyHash(sides: Sides, liveHash: string, exec?: boolean | null): LiveState {
  if (liveHash === sides.afterHash && bitHolds(sides.execAfter, exec)) return 'applied';
  if (liveHash === sides.beforeHash && bitHolds(sides.execBefore, exec)) return 'not_applied';
  return liveHash === ABSENT ? 'missing' : 'conflict';
}

/**
 * applied = live is the afterHash (for a delete: the file is absent) with the bit of execAfter;
 * not_applied = live is the beforeHash (for a create: the file is absent) with the bit of
 * execBefore; missing = absent while neither side is; conflict = any other content or bit.
 */
export function classifyPatch(patch: Sides, live: LiveFile | null, exec?: boolean | null): LiveState {
  return classifyHash(patch, live === null ? ABSENT : live.hash, exec);
}

/** Whether a patch changes the executable bit (so its live state needs the live bit). */
export const holdsExec = (patch: Sides): boolean => patch.execBefore !== undefined || patch.execAfter !== undefined;

/** The live bit a patch's state needs: read only when the patch holds one (undefined otherwise or without modes). */
export async function liveExecFor(workspace: Workspace, patch: Patch): Promise<boolean | null | undefined> {
  return holdsExec(patch) ? liveExec(workspace, patch.path) : undefined;
}

/** A patch's live state, read from the workspace: its bytes, and its executable bit when it holds one. */
export async function readLiveState(workspace: Workspace, patch: Patch): Promise<LiveState> {
  return classifyPatch(patch, await workspace.read(patch.path), await liveExecFor(workspace, patch));
}

/** One file's patches (oldest first) and where its live content stands in their chain. */
export interface FilePlan {
  readonly path: string;
  /** Patches of this file, oldest first; the newest decides what "applied" means. */
  readonly patches: readonly Patch[];
  readonly liveHash: string;
  readonly state: LiveState;
  /**
   * How many of the patches are in effect when live matches a point of the chain: all of them
   * when applied, 0 when not_applied, k when live is the afterHash of patches[k-1]; undefined
   * for conflict and missing.
   */
  readonly appliedCount?: number;
}

/** Groups patches per file (order kept) and classifies each file's chain against its live hash. */
export function planFiles(patches: readonly Patch[], liveHashes: ReadonlyMap<string, string>): FilePlan[] {
  const byPath = new Map<string, Patch[]>();
  for (const patch of patches) {
    const list = byPath.get(patch.path);
    if (list) list.push(patch);
    else byPath.set(patch.path, [patch]);
  }
  return [...byPath].map(([path, chain]) => planChain(path, chain, liveHashes.get(path) ?? ABSENT));
}

function planChain(path: string, chain: Patch[], liveHash: string): FilePlan {
  const oldest = chain[0]!;
  const newest = chain[chain.length - 1]!;
  const state = classifyHash({ beforeHash: oldest.beforeHash, afterHash: newest.afterHash }, liveHash);
  const base = { path, patches: chain, liveHash };
  if (state === 'applied') return { ...base, state, appliedCount: chain.length };
  if (state === 'not_applied') return { ...base, state, appliedCount: 0 };
  for (let k = chain.length - 1; k >= 1; k--) {
    if (chain[k - 1]!.afterHash === liveHash) return { ...base, state: 'conflict', appliedCount: k };
  }
  return { ...base, state };
}

/** Reads each distinct path once (live buffer or disk) and returns its hash (`absent` if none). */
export async function readLiveHashes(workspace: Workspace, paths: Iterable<string>): Promise<Map<string, string>> {
  const unique = [...new Set(paths)];
  const hashes = new Map<string, string>();
  const BATCH = 64;
  for (let i = 0; i < unique.length; i += BATCH) {
    const batch = unique.slice(i, i + BATCH);
    const live = await Promise.all(batch.map((path) => workspace.read(path)));
    batch.forEach((path, j) => hashes.set(path, live[j]?.hash ?? ABSENT));
  }
  return hashes;
}

/** The plan per file of a run or checkpoint: patches in journal order, live read once per file. */
export async function classifyPatches(workspace: Workspace, patches: readonly Patch[]): Promise<FilePlan[]> {
  return planFiles(
    patches,
    await readLiveHashes(
      workspace,
      patches.map((p) => p.path),
    ),
  );
}

/** Live state of every patch on its own (a hash compare each), e.g. for the timeline. */
export function classifyEach(patches: readonly Patch[], liveHashes: ReadonlyMap<string, string>): Map<string, LiveState> {
  const states = new Map<string, LiveState>();
  for (const patch of patches) states.set(patch.patchId, classifyHash(patch, liveHashes.get(patch.path) ?? ABSENT));
  return states;
}
