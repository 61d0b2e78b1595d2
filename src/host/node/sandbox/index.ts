import type { CommandResult } from '../../../core/ports';
import type { RunSettings } from '../../../core/store/records';
import { bwrapArgs, detectSandbox, type SandboxKind } from './bwrap';
import {
  planSandbox,
  readOnlyNote,
  releasePlan,
  setAsideCreatedProtected,
  WALK_LIMIT,
  type SandboxRefusal,
  type SandboxPlan,
  type SandboxRequest,
} from './plan';
import { sandboxExecArgs } from './seatbelt';
import { proxyEnvironment } from '../netproxy/forwarder';

export { detectSandbox, type SandboxKind } from './bwrap';
export { SandboxRefusal, type SandboxRequest } from './plan';
export { sweepLeftovers } from './holds';

/** `agentCheckpoints.sandbox` / `--no-sandbox`, and `agentCheckpoints.commandNetwork` / `--command-network`. */
export type SandboxMode = 'auto' | 'off';
export type CommandNetwork = 'allowlist' | 'on' | 'off';

/** What a run records of how its commands ran. */
export function commandSettings(mode: SandboxMode, network: CommandNetwork): NonNullable<RunSettings['commands']> {
  if (mode === 'off') return { sandbox: 'off', network };
  const kind = detectSandbox();
  return { sandbox: kind.kind === 'none' ? 'unavailable' : kind.kind, network };
}

/** One command ready to start inside the sandbox: what to spawn, and what to do once it ended. */
export interface SandboxedLaunch {
  readonly file: string;
  readonly args: readonly string[];
  /** Ends the plan's holds on placeholders; gives the note for the tool result when a write was stopped. */
  finish(result: CommandResult): CommandResult;
  /** Ends the plan's holds on placeholders (a long-lived process such as an MCP server, once it ended). */
  release(): void;
  /** Variables the launch adds to the built environment (the proxy's, with the network through the allowlist). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * The launch of `command` in the platform's sandbox; undefined when there is none (the caller
 * runs it plainly, having warned). Throws SandboxRefusal when the workspace holds what the sandbox
 * cannot protect.
 */
export function sandboxedLaunch(kind: SandboxKind, request: SandboxRequest, cwd: string, command: string): SandboxedLaunch | undefined {
  if (kind.kind === 'none') return undefined;
  const plan: SandboxPlan = planSandbox(request);
  const args = kind.kind === 'bwrap' ? bwrapArgs(plan, cwd, command) : sandboxExecArgs(plan, command);
  const proxied = kind.kind === 'bwrap' && plan.proxySocket !== undefined;
  return {
    file: kind.path,
    args,
    env: proxied ? proxyEnvironment() : {},
    release: () => {
      releasePlan(plan);
      setAsideCreatedProtected(plan);
    },
    finish(result) {
      releasePlan(plan);
      const moved = setAsideCreatedProtected(plan);
      const note = readOnlyNote(plan, `${result.stdout}\n${result.stderr}`, kind.kind === 'bwrap' ? 'bubblewrap' : 'sandbox-exec');
      const parts = [
        ...(moved.length > 0 ? [`Set aside (renamed), as a command may not create protected paths: ${moved.join(', ')}.`] : []),
        ...(note !== undefined ? [note] : []),
        ...partialWalkNote(plan),
        ...(proxied ? refusalNote(request.proxy?.takeRefusals() ?? []) : []),
      ];
      return parts.length === 0 ? result : { ...result, sandboxNote: parts.join('\n') };
    },
  };
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

const toldPartialWalk = new Set<string>();

/** Said once per workspace and process: past WALK_LIMIT folders, nested protected paths are not guarded. */
function partialWalkNote(plan: SandboxPlan): string[] {
  const key = plan.roots.join('\0');
  if (plan.walkComplete || toldPartialWalk.has(key)) return [];
  toldPartialWalk.add(key);
  return [
    `This workspace has more than ${WALK_LIMIT} folders: the sandbox guards the protected paths at each workspace folder's top and nested ones within the first ${WALK_LIMIT} folders only (a sub-repository's .git or a nested .vscode deeper in the tree is writable by commands).`,
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
