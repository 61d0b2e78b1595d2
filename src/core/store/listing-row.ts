import { z } from 'zod';
import { parseJsonAs } from './atomic-file';
import { DAMAGE_DOC as DAMAGE, type JournalDevice, type ListingRow, type NewListingRow } from './device';
import type { FoldState } from './fold';
import { lastUndoableRestore } from './listing-facts';
import { FORMAT_VERSION, type RunRecord } from './records';

// A run's listing row as the store derives it from its fold, and the damage note a whole read
// leaves beside a damaged journal (so that writers and the listing refuse it without reading it).

/** True when the stored row already says what `row` says (a writer that closed cleanly left it current). */
export function sameListing(stored: ListingRow | null, row: NewListingRow): boolean {
  return stored !== null && JSON.stringify(stored) === JSON.stringify({ v: FORMAT_VERSION, ...row });
}

/** The listing row of a run folded as `fold`, with `journalBytes` of journal, its last record written at `updatedAt`. */
export function listingOf(
  fold: FoldState,
  journalBytes: number,
  updatedAt: number,
  tornTailCut?: ListingRow['tornTailCut'],
  pendingPatches?: number,
): NewListingRow {
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
    workspace: workspaceKey(fold.run),
  };
}

/**
 * The workspace a run works on, as workers match it: the git commit it started from (a checkout
 * of the same commit anywhere will do), else its first folder's path.
 */
export function workspaceKey(run: Pick<RunRecord, 'git' | 'workspaceFolders'>): string {
  return run.git.head !== undefined ? `git:${run.git.head}` : `folder:${run.workspaceFolders[0] ?? ''}`;
}

/** True when the listing's facts of two rows differ (the row is then rewritten at once). */
export function factsChanged(a: NewListingRow, b: NewListingRow): boolean {
  return a.pendingPatches !== b.pendingPatches || a.undoableRestore !== b.undoableRestore || a.instruction !== b.instruction;
}

export const DamageNote = z.object({ file: z.string(), offset: z.number(), message: z.string(), at: z.number() });
export type DamageNote = z.infer<typeof DamageNote>;

export function parseDamage(bytes: Uint8Array | null): DamageNote | null {
  return bytes && parseJsonAs(bytes, DamageNote);
}

export async function readDamage(device: JournalDevice, runId: string): Promise<DamageNote | null> {
  return parseDamage(await device.getDoc(runId, DAMAGE));
}

export async function writeDamage(device: JournalDevice, runId: string, damage: DamageNote): Promise<void> {
  await device.putDoc(runId, DAMAGE, new TextEncoder().encode(JSON.stringify(damage)), true);
}
