import type { RunStatus } from './viewModel';

// Two facts about a run's status that core, the hosts and the webview share. A leaf module (no
// imports but types) so that the browser bundle can hold it without any of src/core.

/** The reason a run records when it paused because the person cancelled it. */
export const CANCELLED_REASON = 'cancelled';

/**
 * Whether a resume can continue a run in this status, with no live writer holding it. A run that
 * ended (completed, failed, cancelled) has a run_end record and nothing to resume.
 */
export function isResumableStatus(status: RunStatus, heldByLiveWriter: boolean): boolean {
  return !heldByLiveWriter && (status === 'paused' || status === 'interrupted' || status === 'running');
}
