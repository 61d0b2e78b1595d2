import * as z from 'zod/mini';

/** What survives the view being hidden and shown again (vscode.getState / setState). */
export const SavedState = z.object({
  expanded: z.array(z.string()),
  scrollTop: z.number().check(z.nonnegative()),
  selected: z.nullable(z.string()),
  /** Runs already shown once: only a run seen for the first time is expanded automatically. */
  seenRuns: z.array(z.string()),
});
export type SavedState = z.infer<typeof SavedState>;

export const EMPTY_STATE: SavedState = { expanded: [], scrollTop: 0, selected: null, seenRuns: [] };

const MAX_SEEN = 500;

export function loadState(raw: unknown): SavedState {
  const parsed = SavedState.safeParse(raw);
  return parsed.success ? parsed.data : EMPTY_STATE;
}

/**
 * Runs seen for the first time: the newest of them is expanded (a new run opens by itself),
 * older ones stay closed. Returns the keys to expand and the updated seen list.
 */
export function newlySeen(runIds: readonly string[], seen: readonly string[]): { expandRunId: string | undefined; seen: string[] } {
  const known = new Set(seen);
  const fresh = runIds.filter((id) => !known.has(id));
  if (fresh.length === 0) return { expandRunId: undefined, seen: [...seen] };
  return { expandRunId: fresh[0], seen: [...seen, ...fresh].slice(-MAX_SEEN) };
}
