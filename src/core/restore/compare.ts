import { ABSENT, type ContentHash, type Patch } from '../patches/schema';

// Comparing two branches (runs related by forks, or any two runs): where their histories part,
// and what each did to the files from there. Pure: hosts read the runs and show the result.

/** A run's parent as the store lists it: the run and step it was forked from. */
export interface ParentLink {
  readonly runId: string;
  readonly step: number;
}

export type ParentOf = (runId: string) => ParentLink | undefined;

/** Where two branches part: `base` is their nearest common run; steps before `step` are shared. */
export interface Divergence {
  readonly base?: string;
  /** The first step the two histories may differ in (0 when they share nothing). */
  readonly step: number;
}

/** The run and its ancestors, each with the first step of it that is not in `runId`'s history. */
function lineage(runId: string, parentOf: ParentOf): Map<string, number> {
  const chain = new Map<string, number>([[runId, Infinity]]);
  let limit = Infinity;
  let link = parentOf(runId);
  // A cycle in what the store lists is broken at the first run met twice.
  while (link && !chain.has(link.runId)) {
    limit = Math.min(limit, link.step);
    chain.set(link.runId, limit);
    link = parentOf(link.runId);
  }
  return chain;
}

/** Where the histories of runs `a` and `b` part; throws when they are the same run. */
export function divergence(a: string, b: string, parentOf: ParentOf): Divergence {
  if (a === b) throw new Error(`run ${a} cannot be compared with itself`);
  const ofB = lineage(b, parentOf);
  for (const [runId, limitA] of lineage(a, parentOf)) {
    const limitB = ofB.get(runId);
    if (limitB !== undefined) return { base: runId, step: Math.min(limitA, limitB) };
  }
  return { step: 0 };
}

/** One side of a file in a comparison: its content at the end of that branch. */
export interface FileSide {
  readonly hash: ContentHash;
  /** The content's blob; absent for an absent file or content over the size cap. */
  readonly blob?: string;
  readonly binary: boolean;
  /** The branch wrote the file after the divergence (otherwise it holds what it held there). */
  readonly written: boolean;
}

export interface FileComparison {
  readonly path: string;
  readonly left: FileSide;
  readonly right: FileSide;
  /** Both branches end with the same content. */
  readonly same: boolean;
}

/** The first and the last patch of each path the branch wrote from step `from` on, in path order. */
function writesFrom(patches: Iterable<Patch>, from: number): Map<string, { first: Patch; last: Patch }> {
  const writes = new Map<string, { first: Patch; last: Patch }>();
  for (const patch of patches) {
    if (patch.stepId < from) continue;
    const seen = writes.get(patch.path);
    writes.set(patch.path, { first: seen?.first ?? patch, last: patch });
  }
  return writes;
}

function side(hash: ContentHash, blob: string | undefined, binary: boolean, written: boolean): FileSide {
  return { hash, ...(blob !== undefined && hash !== ABSENT ? { blob } : {}), binary, written };
}

/**
 * Each file either branch wrote from step `from` on, with what it holds at the end of each: the
 * branch's last write to it (what its agent made of it, whether or not it was rolled back since),
 * or, on a side that did not write it, the content it had at the divergence (the other side's
 * first before-content). Sorted by path.
 */
export function compareFiles(left: Iterable<Patch>, right: Iterable<Patch>, from: number): FileComparison[] {
  const ofLeft = writesFrom(left, from);
  const ofRight = writesFrom(right, from);
  const paths = [...new Set([...ofLeft.keys(), ...ofRight.keys()])].sort();
  return paths.map((path) => {
    const l = ofLeft.get(path);
    const r = ofRight.get(path);
    const start = (l ?? r)!.first;
    const atStart = side(start.beforeHash, start.beforeBlob, start.binary, false);
    const leftSide = l ? side(l.last.afterHash, l.last.afterBlob, l.last.binary, true) : atStart;
    const rightSide = r ? side(r.last.afterHash, r.last.afterBlob, r.last.binary, true) : atStart;
    return { path, left: leftSide, right: rightSide, same: leftSide.hash === rightSide.hash };
  });
}
