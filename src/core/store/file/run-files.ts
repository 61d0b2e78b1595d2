import { z } from 'zod';
import { parseJsonAs, readIfExists, replaceFileAtomic } from '../atomic-file';
import type { FoldState } from '../fold';
import { lastUndoableRestore } from '../listing-facts';
import { joinPath, type StoreFs } from '../fs-port';
import { FORMAT_VERSION, RunStatus } from '../records';

export const JOURNAL = 'journal.jsonl';
export const STATE = 'state.json';
const DAMAGE = 'damage.json';

/** state.json: enough to list a run without reading its journal. The journal stays the truth. */
export const RunStateFile = z.object({
  v: z.number().int().positive(),
  runId: z.string(),
  task: z.string(),
  createdAt: z.number(),
  status: RunStatus,
  lastSeq: z.number().int().nonnegative(),
  updatedAt: z.number(),
  steps: z.number().int().nonnegative(),
  journalBytes: z.number().int().nonnegative(),
  /** A fork: the run and step it was forked from. */
  parent: z.object({ runId: z.string(), step: z.number().int().positive() }).optional(),
  /** The last torn tail a writer cut when it opened the run. */
  tornTailCut: z.object({ offset: z.number(), bytes: z.number(), at: z.number() }).optional(),
  /**
   * Facts of the fold the listing carries: how many patches are pending (absent: not known without
   * reading the run; their ids are in pending.json). A store of an older version wrote the ids here.
   */
  pendingPatches: z.union([z.number().int().nonnegative(), z.array(z.string()).transform((ids) => ids.length)]).optional(),
  /** ...and whether a restore can be undone. */
  undoableRestore: z.boolean().optional(),
  /** ...and the first new instruction since the run began or was forked. */
  instruction: z.string().optional(),
});
export type RunStateFile = z.infer<typeof RunStateFile>;

const DamageFile = z.object({ file: z.string(), offset: z.number(), message: z.string(), at: z.number() });
type DamageFile = z.infer<typeof DamageFile>;

async function readJson<T>(fs: StoreFs, path: string, schema: z.ZodType<T>): Promise<T | null> {
  const bytes = await readIfExists(fs, path);
  return bytes && parseJsonAs(bytes, schema);
}

export async function readStateFile(fs: StoreFs, runDir: string): Promise<RunStateFile | null> {
  const state = await readJson(fs, joinPath(runDir, STATE), RunStateFile);
  return state && state.v <= FORMAT_VERSION ? state : null;
}

/** True when state.json already says what `state` says (a writer that closed cleanly left it current). */
export function sameState(stored: RunStateFile | null, state: Omit<RunStateFile, 'v'>): boolean {
  return stored !== null && JSON.stringify(stored) === JSON.stringify({ v: FORMAT_VERSION, ...state });
}

/** What state.json says of a run folded as `fold`, with `journalBytes` of journal, its last record written at `updatedAt`. */
export function stateFileOf(
  fold: FoldState,
  journalBytes: number,
  updatedAt: number,
  tornTailCut?: RunStateFile['tornTailCut'],
  pendingPatches?: number,
): Omit<RunStateFile, 'v'> {
  const { runId, task, createdAt } = fold.run;
  const { status, lastSeq, stepId: steps } = fold;
  const parent = fold.run.parent && { runId: fold.run.parent.runId, step: fold.run.parent.step };
  return {
    runId,
    task,
    createdAt,
    status,
    lastSeq,
    updatedAt,
    steps,
    journalBytes,
    ...(parent ? { parent } : {}),
    ...(tornTailCut ? { tornTailCut } : {}),
    ...(pendingPatches !== undefined ? { pendingPatches } : {}),
    undoableRestore: lastUndoableRestore(fold) !== undefined,
    ...(fold.firstInstruction !== undefined ? { instruction: fold.firstInstruction } : {}),
  };
}

/** True when the listing's facts of two states differ (state.json is then rewritten at once). */
export function factsChanged(a: Omit<RunStateFile, 'v'>, b: Omit<RunStateFile, 'v'>): boolean {
  return a.pendingPatches !== b.pendingPatches || a.undoableRestore !== b.undoableRestore || a.instruction !== b.instruction;
}

export function stateFileBytes(state: Omit<RunStateFile, 'v'>): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ v: FORMAT_VERSION, ...state }));
}

export async function writeStateFile(fs: StoreFs, runDir: string, state: Omit<RunStateFile, 'v'>): Promise<void> {
  await replaceFileAtomic(fs, runDir, STATE, stateFileBytes(state));
}

export async function readDamageFile(fs: StoreFs, runDir: string): Promise<DamageFile | null> {
  return readJson(fs, joinPath(runDir, DAMAGE), DamageFile);
}

export async function writeDamageFile(fs: StoreFs, runDir: string, damage: DamageFile): Promise<void> {
  await replaceFileAtomic(fs, runDir, DAMAGE, JSON.stringify(damage));
}
