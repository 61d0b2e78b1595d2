import type { CommandChanges } from '../../../core/ports';
import { errorText } from '../../../core/error-text';
import { detectSandbox, LiveView, noViewReason, sandboxedLaunch, type SandboxedLaunch, type SandboxRequest } from '../sandbox/index';

// How a stdio MCP server is sandboxed: like a command, inside a copy-on-write view of the workspace
// that lives as long as the server (its changes are captured at the end of each of its calls and
// become patches of that call); where no view can be had, with the workspace read-only, since a
// protected path missing from the workspace (.vscode/tasks.json, .envrc) could not be guarded.

/** One server's sandboxed start: the launch, its live view when it has one, and the line said when it started. */
export interface ServerSandbox {
  readonly launch: SandboxedLaunch;
  readonly view?: LiveView;
  readonly note: string;
}

export const VIEW_NOTE =
  'sees a copy-on-write view of the workspace; its file changes are applied at the end of each of its calls, as patches of that call';

/** The sandboxed start of a server, or undefined (no sandbox wanted, or none on this platform). `noView`: why a view failed before. */
export function serverSandbox(
  request: SandboxRequest,
  cwd: string,
  command: string,
  pid: () => number | null | undefined,
  noView?: string,
): ServerSandbox | undefined {
  const kind = detectSandbox();
  const why = noView ?? noViewReason(kind, request);
  if (why === undefined) {
    const launch = sandboxedLaunch(kind, request, cwd, command, true);
    if (launch?.view !== undefined) return { launch, view: new LiveView(launch.view, request, pid), note: VIEW_NOTE };
  }
  const launch = sandboxedLaunch(kind, { ...request, readOnlyRoots: true }, cwd, command);
  return launch === undefined ? undefined : { launch, note: `has no copy-on-write view here (${why}): the workspace is read-only to it` };
}

/** The change set of one call of a server with a view (or why it could not be read). */
export async function callChanges(view: LiveView | undefined, started: number): Promise<{ changes?: CommandChanges; note?: string }> {
  if (view === undefined) return {};
  try {
    const changes = await view.capture(started);
    return changes !== undefined ? { changes } : {};
  } catch (error) {
    return { note: `Its changes to the workspace could not be read from its view (they stay there): ${errorText(error)}` };
  }
}
