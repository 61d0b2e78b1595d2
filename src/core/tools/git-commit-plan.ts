import { ABSENT, hashContent } from '../patches/hash';
import type { RunReview } from '../patches/review-load';
import type { Patch } from '../patches/schema';
import type { GitCommitFacts, LiveFile } from '../ports';

// What git_commit would commit, decided from the run's patches, the review (Keep), the live files
// and git's HEAD and index: no I/O here. A file the run changed goes in when the person kept all
// of it and it holds nothing but the run's changes; hunks still waiting leave their file out (named);
// anything of the person's in a file (their edits, an undone hunk, changes from before the run,
// their own staging) refuses the commit unless the file is named.

/** A file the run changed: the content before each of its writes, and after the last (patches rolled back are not counted). */
export interface RunFile {
  readonly path: string;
  readonly befores: readonly string[];
  readonly lastAfter: string;
  /** False when someone changed the file between two of the run's writes. */
  readonly chained: boolean;
  /** Hunks that still wait for the person's decision (a change that cannot be reviewed inline counts as one until accepted). */
  readonly waiting: number;
}

export interface CommitFile {
  readonly path: string;
  readonly deleted: boolean;
}

export interface CommitPlan {
  readonly files: readonly CommitFile[];
  /** Left out, and why (hunks still waiting, nothing to commit). */
  readonly leftOut: readonly { readonly path: string; readonly why: string }[];
  /** Would sweep in the person's changes (or cannot be committed as it is): the commit is refused while any is here. */
  readonly refused: readonly { readonly path: string; readonly why: string }[];
}

/** The files the run changed, from its review: patches in order, rolled-back ones left aside. */
export function runFiles(review: RunReview): RunFile[] {
  const byPath = new Map<string, Patch[]>();
  const live = [...review.patches.values()].filter((p) => p.state !== 'rolled_back').sort((a, b) => a.createdAt - b.createdAt);
  for (const patch of live) byPath.set(patch.path, [...(byPath.get(patch.path) ?? []), patch]);
  const waitingOf = new Map<string, number>();
  const reviewable = new Set(review.pending.map((p) => p.patch.patchId));
  for (const pending of review.pending) waitingOf.set(pending.patch.path, (waitingOf.get(pending.patch.path) ?? 0) + pending.hunks.length);
  for (const patch of live)
    if (patch.state === 'pending' && !reviewable.has(patch.patchId)) waitingOf.set(patch.path, (waitingOf.get(patch.path) ?? 0) + 1);
  return [...byPath].map(([path, patches]) => ({
    path,
    befores: patches.map((p) => p.beforeHash),
    lastAfter: patches.at(-1)!.afterHash,
    chained: patches.every((p, i) => i === 0 || p.beforeHash === patches[i - 1]!.afterHash),
    waiting: waitingOf.get(path) ?? 0,
  }));
}

export interface PlanInput {
  readonly runFiles: readonly RunFile[];
  /** Paths the model named (normalized); when given, exactly these are committed. */
  readonly named?: readonly string[];
  /** The person said to commit hunks still waiting too. */
  readonly includeWaiting: boolean;
  readonly live: ReadonlyMap<string, LiveFile | null>;
  readonly git: GitCommitFacts;
}

const headHash = (head: Uint8Array | null) => (head === null ? ABSENT : hashContent(head));

/** Why a file cannot be committed at all (unsaved, staged by the person), or undefined. */
function blocked(path: string, input: PlanInput, named: boolean): string | undefined {
  const live = input.live.get(path);
  if (live?.dirty === true) return 'it has unsaved changes in the editor: save it first';
  const staged = input.git.files.get(path)?.staged ?? 'none';
  if (staged === 'other' && !named) return 'you staged a different version of it (git add): name it to commit its current content';
  return undefined;
}

/** Why a run file holds changes that are not the run's, or undefined. */
function notTheRuns(file: RunFile, input: PlanInput): string | undefined {
  const live = input.live.get(file.path);
  if ((live?.hash ?? ABSENT) !== file.lastAfter) return 'it changed since the run wrote it (your edits, or hunks you undid)';
  if (!file.chained) return 'someone changed it between the run’s writes';
  const head = input.git.files.get(file.path)?.head ?? null;
  // HEAD is where one of the run's writes started from (the run's first, or one after an earlier commit of the run).
  if (!file.befores.includes(headHash(head))) return 'it held changes not committed before the run started';
  return undefined;
}

function samesAsHead(path: string, input: PlanInput): boolean {
  return (input.live.get(path)?.hash ?? ABSENT) === headHash(input.git.files.get(path)?.head ?? null);
}

/** The plan: named paths as they are, else the run's kept files. */
export function planCommit(input: PlanInput): CommitPlan {
  const files: CommitFile[] = [];
  const leftOut: { path: string; why: string }[] = [];
  const refused: { path: string; why: string }[] = [];
  const add = (path: string) => files.push({ path, deleted: input.live.get(path) == null });
  if (input.named !== undefined) {
    for (const path of new Set(input.named)) {
      const why = blocked(path, input, true) ?? (samesAsHead(path, input) ? 'it does not differ from HEAD' : undefined);
      if (why === undefined) add(path);
      else refused.push({ path, why });
    }
    return { files, leftOut, refused };
  }
  for (const file of input.runFiles) {
    if (file.waiting > 0 && !input.includeWaiting) {
      leftOut.push({ path: file.path, why: `${file.waiting} change(s) still wait for review (Keep them, or name the file)` });
      continue;
    }
    if (samesAsHead(file.path, input)) {
      leftOut.push({ path: file.path, why: 'it does not differ from HEAD' });
      continue;
    }
    const why = blocked(file.path, input, false) ?? notTheRuns(file, input);
    if (why !== undefined) refused.push({ path: file.path, why });
    else add(file.path);
  }
  return { files, leftOut, refused };
}

/** The message as committed: the model's words, then trailers naming the agent and the run. */
export function commitMessage(message: string, runId: string): string {
  return `${message.trim()}\n\nCo-authored-by: Agent Checkpoints <agent@agent-checkpoints.invalid>\nAgent-Checkpoints-Run: ${runId}\n`;
}
