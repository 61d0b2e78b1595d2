import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { CommandRunner } from '../../../core/ports';
import { createNodeCommandRunner } from '../command-runner';
import { storeReach, type NetProxy } from '../netproxy/index';
import type { CommandNetwork, SandboxMode, SandboxRequest } from '../sandbox/index';
import type { Shell } from '../shell';
import { cliStateBase, vscodeUserDataDirs } from '../state-dir';
import type { StoreAddress } from '../store-factory';

// How the agent's commands (and MCP servers) are launched, built once for the CLI and the
// extension: the sandbox request made from the person's settings, the environment they pass, the
// network proxy, and the runner over them.

/** The person's settings that shape a command's launch (flags in the CLI, user settings in VS Code). */
export interface CommandSettings {
  readonly sandbox: SandboxMode;
  readonly network: CommandNetwork;
  /** Host variables (names or patterns) commands and MCP servers may have besides the base set. */
  readonly passEnv: readonly string[];
  /** Globs added to the built-in protected paths. */
  readonly protectedPaths?: readonly string[];
  /** Folders of the home folder a command may use (read-write), e.g. a package cache. */
  readonly homePaths?: readonly string[];
}

/** Where commands run and what they must never see. */
export interface CommandPlaces {
  /** The workspace folders. */
  readonly roots: readonly string[];
  /** The run store: a file store's folder is hidden, a PostgreSQL server's socket folder too (its address is refused by the proxy). */
  readonly store: StoreAddress;
  /** The host's own folders, hidden besides the person's state (the editor's user folder and storage). */
  readonly hidden?: readonly string[];
  /** Where commands' copy-on-write views go (default: `command-views` in a file store's folder, or in this tool's state with a PostgreSQL store). */
  readonly views?: string;
}

/** Where the person's own state lives: never visible to a command (editor settings and storage, this tool's config and state). */
export function hiddenStatePaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir();
  const config = env['XDG_CONFIG_HOME'] !== undefined && env['XDG_CONFIG_HOME'] !== '' ? env['XDG_CONFIG_HOME'] : join(home, '.config');
  return [...vscodeUserDataDirs(env), cliStateBase(env), join(config, 'agent-checkpoints')];
}

/** What of the store a command must not see: the file store's folder, or the socket folder a PostgreSQL address names (/run/postgresql and /tmp are covered always). */
function storeHidden(store: StoreAddress, env: NodeJS.ProcessEnv): string[] {
  return store.kind === 'files' ? [store.dir] : storeReach(store.url, env).socketDirs;
}

/**
 * The one sandbox request of a command or MCP server, from the person's settings; undefined when
 * they switched the sandbox off. `proxy`: with `allowlist`, the host's proxy (none yet: no network).
 */
export function sandboxRequest(
  settings: Omit<CommandSettings, 'passEnv'>,
  places: CommandPlaces,
  proxy?: SandboxRequest['proxy'],
  env: NodeJS.ProcessEnv = process.env,
): SandboxRequest | undefined {
  if (settings.sandbox === 'off') return undefined;
  return {
    roots: places.roots,
    protectedPaths: settings.protectedPaths ?? [],
    hidden: [...storeHidden(places.store, env), ...hiddenStatePaths(env), ...(places.hidden ?? [])],
    homePaths: settings.homePaths ?? [],
    programDirs: [...(env['PATH'] ?? '').split(':'), dirname(process.execPath)],
    network: settings.network === 'on',
    ...(settings.network === 'allowlist' && proxy !== undefined ? { proxy } : {}),
    home: env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir(),
    views: places.views ?? viewsDirOf(places.store, env),
  };
}

/** The default folder of commands' copy-on-write views: hidden with the store (or this tool's state), never in the workspace nor in /tmp. */
function viewsDirOf(store: StoreAddress, env: NodeJS.ProcessEnv): string {
  return store.kind === 'files' ? join(store.dir, 'command-views') : join(cliStateBase(env), 'command-views');
}

export interface CommandLaunchOptions extends CommandPlaces {
  /** The person's settings, read at each command (a change in VS Code applies to the next one). */
  readonly settings: () => CommandSettings;
  /** The network proxy with `allowlist`, once it is up (the host starts it: CLI flags, VS Code's questions). */
  readonly proxy: () => NetProxy | undefined;
  /** The shell of unsandboxed commands. */
  readonly shell: () => Shell;
  /** Keys held elsewhere (VS Code's secret storage): variables with these values are withheld too. */
  readonly secrets?: () => readonly string[];
  /** Told once when commands run unsandboxed because the platform has no sandbox. */
  readonly warn: (message: string) => void;
}

/** How commands and MCP servers start: the runner, and the sandbox and variables each start reads. */
export interface CommandLaunch {
  /** A new runner (each tells once which variables it withheld: the extension keeps one per window, the CLI one per run). */
  runner(): CommandRunner;
  /** The sandbox of the next command or server (undefined: switched off). */
  sandbox(): SandboxRequest | undefined;
  /** The host variables the person lets commands and servers have. */
  passEnv(): readonly string[];
}

export function commandLaunch(options: CommandLaunchOptions): CommandLaunch {
  const sandbox = (): SandboxRequest | undefined => sandboxRequest(options.settings(), options, options.proxy());
  const passEnv = (): readonly string[] => options.settings().passEnv;
  const runner = (): CommandRunner =>
    createNodeCommandRunner({
      sandbox,
      passEnv,
      shell: options.shell,
      warn: options.warn,
      ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
    });
  return { runner, sandbox, passEnv };
}
