import type { RunRecord } from '../../../core/store/records';

// What the PostgreSQL store is known by, without loading pg: pg is loaded only when a
// postgres:// store is opened (loading it costs the CLI about 55 ms, and its runtime probe of
// `navigator` is reported as an error by the extension host).

/**
 * The workspace a run works on, as workers match it: the git commit it started from (a checkout
 * of the same commit anywhere will do), else its first folder's path.
 */
export function workspaceKey(run: Pick<RunRecord, 'git' | 'workspaceFolders'>): string {
  return run.git.head !== undefined ? `git:${run.git.head}` : `folder:${run.workspaceFolders[0] ?? ''}`;
}

/** The address without its password, for messages. */
export function redactedAddress(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable address)';
  }
}
