import { readdirSync } from 'node:fs';
import type { CommandChanges, CommandResult } from '../../../core/ports';
import type { RunSettings } from '../../../core/store/records';
import { bwrapArgs, detectSandbox, type SandboxKind } from './bwrap';
import { planSandbox, readOnlyNote, type SandboxPlan, type SandboxRefusal, type SandboxRequest } from './plan';
import { sandboxExecArgs } from './seatbelt';
import { captureView } from './capture';
import { changeSetOf } from './changes';
import {
  discardView,
  makeView,
  recoverView,
  settledView,
  NO_VIEW_EXIT,
  NO_VIEW_MARK,
  foreignCopyUp,
  overlayProblem,
  unshareOf,
  viewLaunch,
  type View,
} from './overlay';
import { proxyEnvironment } from '../netproxy/forwarder';

export { detectSandbox, type SandboxKind } from './bwrap';
export { SandboxRefusal, type SandboxRequest } from './plan';
export { sweepViews, NO_VIEW_MARK } from './overlay';
export { LiveView } from './live-view';

/** `agentCheckpoints.sandbox` / `--no-sandbox`, and `agentCheckpoints.commandNetwork` / `--command-network`. */
export type SandboxMode = 'auto' | 'off';
export type CommandNetwork = 'allowlist' | 'on' | 'off';

/** What a run records of how its commands ran. */
export function commandSettings(mode: SandboxMode, network: CommandNetwork, allowlist?: string): NonNullable<RunSettings['commands']> {
  const hosts = network === 'allowlist' && allowlist !== undefined ? { allowlist: allowlist.slice(0, 4000) } : {};
  if (mode === 'off') return { sandbox: 'off', network, ...hosts };
  const kind = detectSandbox();
  return { sandbox: kind.kind === 'none' ? 'unavailable' : kind.kind, network, ...hosts };
}

/** One command ready to start inside the sandbox: what to spawn, and what to do once it ended. */
export interface SandboxedLaunch {
  readonly file: string;
  readonly args: readonly string[];
  /** The command's copy-on-write view (bwrap with overlayfs), when it has one. */
  readonly view?: View;
  /** Gives the note for the tool result when a write was stopped, and the change set of the view. */
  finish(result: CommandResult): Promise<CommandResult>;
  /** Drops the view of a command that never ran (or a long-lived process such as an MCP server, once it ended). */
  release(): void;
  /** Variables the launch adds to the built environment (the proxy's, with the network through the allowlist). */
  readonly env: Readonly<Record<string, string>>;
}

/** The note of a command that met another owner's file in its view (the runner's later commands then go without one). */
export const FOREIGN_NOTE_START = 'A copy-on-write view could not serve this command:';
const FOREIGN_NOTE_END =
  'Later commands of this run go without a view: the workspace is written in place and a before/after scan of its files names what they changed (not patches). Run this command again if its error came from that file.';

/** Why the later commands of a runner go without a view, from a result; undefined when nothing says so. */
export function noViewAfter(result: CommandResult): string | undefined {
  return result.sandboxNote?.includes(FOREIGN_NOTE_START) === true ? foreignCopyUp(result.sandboxNote) : undefined;
}

/** True for the result of a launch whose view could not be mounted: the command did not run, and runs again without one. */
export function noViewResult(result: CommandResult): boolean {
  return result.exitCode === NO_VIEW_EXIT && result.stderr.includes(NO_VIEW_MARK);
}

/** Why a command gets no view (said in its result), or undefined when it gets one. */
export function noViewReason(kind: SandboxKind, request: SandboxRequest, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (kind.kind !== 'bwrap') return kind.kind === 'none' ? kind.reason : 'copy-on-write views are made on Linux only';
  if (request.views === undefined) return 'no folder for views was given';
  return overlayProblem(request.views, request.roots, env);
}

/**
 * The launch of `command` in the platform's sandbox; undefined when there is none (the caller
 * runs it plainly, having warned). With `withView` (bwrap), inside a copy-on-write view of the
 * workspace folders whose changes come back as the result's change set. Throws SandboxRefusal
 * when the workspace holds what the sandbox cannot protect.
 */
export function sandboxedLaunch(
  kind: SandboxKind,
  request: SandboxRequest,
  cwd: string,
  command: string,
  withView = false,
  callId?: string,
): SandboxedLaunch | undefined {
  if (kind.kind === 'none') return undefined;
  const plan: SandboxPlan = planSandbox(request);
  const args = kind.kind === 'bwrap' ? bwrapArgs(plan, cwd, command) : sandboxExecArgs(plan, command);
  const proxied = kind.kind === 'bwrap' && plan.proxySocket !== undefined;
  const view = withView && request.views !== undefined ? makeView(request.views, plan.roots, callId) : undefined;
  const unreached = networkUnreached(plan, request);
  const launched = view !== undefined ? viewLaunch(unshareOf()!, view, kind.path, args) : { file: kind.path, args };
  return {
    ...launched,
    ...(view !== undefined ? { view } : {}),
    env: proxied ? proxyEnvironment() : {},
    release: () => {
      if (view !== undefined) discardView(view.dir);
    },
    async finish(result) {
      const note = readOnlyNote(plan, `${result.stdout}\n${result.stderr}`, kind.kind === 'bwrap' ? 'bubblewrap' : 'sandbox-exec');
      const foreign = view !== undefined ? foreignCopyUp(`${result.stdout}\n${result.stderr}`) : undefined;
      const parts = [
        ...(note !== undefined ? [note] : []),
        ...(proxied ? refusalNote(request.proxy?.takeRefusals() ?? []) : []),
        ...(foreign !== undefined ? [`${FOREIGN_NOTE_START} ${foreign}; the workspace file was not changed. ${FOREIGN_NOTE_END}`] : []),
      ];
      const held =
        view !== undefined && foreign === undefined && !noViewResult(result) && plan.homePaths.length === 0 && (await unreached());
      const noted = {
        ...result,
        ...(parts.length > 0 ? { sandboxNote: parts.join('\n') } : {}),
        ...(held ? { isolated: true as const } : {}),
      };
      if (view === undefined) return noted;
      if (noViewResult(result) || untouched(view)) {
        discardView(view.dir); // no view, or nothing written in it: nothing to capture
        return noted;
      }
      try {
        const changes = await changeSetOf(view, await captureView(view, request.protectedPaths), request.trackLimit);
        if (changes.files.length > 0 || changes.refused.length > 0 || changes.notes.length > 0) return { ...noted, changes };
        await changes.discard(); // nothing changed: nothing for run_command to apply
        return noted;
      } catch (error) {
        discardView(view.dir);
        throw error;
      } finally {
        settledView(view);
      }
    },
  };
}

/**
 * Whether a command reached no host, asked when it ended: the network off, and either no proxy or
 * one that accepted no connection at all since the launch (the proxy serves every command and
 * server of the host, so none at all is the only count that speaks for this one). Read a turn of
 * the event loop after the end, so that a connection queued before it is counted.
 */
function networkUnreached(plan: SandboxPlan, request: SandboxRequest): () => Promise<boolean> {
  const proxy = request.proxy;
  if (plan.network) return () => Promise.resolve(false);
  if (plan.proxySocket === undefined) return () => Promise.resolve(true);
  if (proxy?.connections === undefined) return () => Promise.resolve(false);
  const before = proxy.connections();
  return async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return proxy.connections?.() === before;
  };
}

/** Whether the command wrote nothing in its view (every upper folder empty): the common `true`, `ls`, `git status`. */
function untouched(view: View): boolean {
  return view.layers.every((layer) => readdirSync(layer.upper).length === 0);
}

/** The change set a command of `callId` left in its view when its host died; undefined when it left none. */
export async function recoverChanges(request: SandboxRequest, callId: string): Promise<CommandChanges | undefined> {
  const view = request.views !== undefined ? recoverView(request.views, callId) : undefined;
  if (view === undefined) return undefined;
  return changeSetOf(view, await captureView(view, request.protectedPaths), request.trackLimit);
}

/** The hosts the proxy refused while the command ran, and how the person allows one. */
function refusalNote(refusals: readonly string[]): string[] {
  if (refusals.length === 0) return [];
  const shown = [...new Set(refusals)].slice(0, 10);
  return [
    `The network proxy refused (commands reach only allowed hosts, through HTTP_PROXY/HTTPS_PROXY; there is no DNS in the sandbox):\n  ${shown.join('\n  ')}`,
    'The person can allow a host (CLI: --allow-host HOST or HOST:PORT; VS Code: agentCheckpoints.commandAllowedHosts, or the question it asks; or their own ~/.npmrc, pip or git --global configuration), or switch the allowlist off (agentCheckpoints.commandNetwork: on, --command-network on).',
  ];
}

/** The result of a command the sandbox refused to start. */
export function refusedResult(error: SandboxRefusal): CommandResult {
  return {
    exitCode: 126,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut: false,
    truncated: false,
    durationMs: 0,
    sandboxNote: error.message,
  };
}
