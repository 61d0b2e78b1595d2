import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

// Where a workspace's store is: one rule for the extension and the CLI. A workspace is keyed by
// its folders (sorted), so every window, extension host, reload and reconnect of it finds the
// same store, and the CLI finds the extension's runs for the same folder.

/** The extension's id (publisher.name), the name of its global storage folder. */
export const EXTENSION_ID = 'agent-checkpoints.agent-checkpoints';

/** A workspace folder as the key sees it: `file:<real path>` for a local folder, else its URI. */
export function folderKey(folder: { scheme: string; fsPath: string; uri: string }): string {
  if (folder.scheme !== 'file') return folder.uri;
  let real = resolve(folder.fsPath);
  try {
    real = realpathSync(real);
  } catch {
    // A missing folder keeps its resolved path.
  }
  return `file:${process.platform === 'win32' ? real.toLowerCase() : real}`;
}

/** The store of a workspace under a base folder: `<base>/workspaces/<sha256 of the sorted folder keys>`. */
export function workspaceStoreDir(base: string, folderKeys: readonly string[]): string {
  const key = createHash('sha256')
    .update([...folderKeys].sort().join('\n'))
    .digest('hex');
  return join(base, 'workspaces', key);
}

function homeOf(env: NodeJS.ProcessEnv): string {
  return env['HOME'] !== undefined && env['HOME'] !== '' ? env['HOME'] : homedir();
}

function envDir(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = env[name];
  return value !== undefined && value !== '' ? value : fallback;
}

/** The user-data folders of the VS Code builds this machine may run (desktop, Insiders, OSS, code-server, remote servers). */
export function vscodeUserDataDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = homeOf(env);
  const config =
    process.platform === 'darwin'
      ? join(home, 'Library', 'Application Support')
      : process.platform === 'win32'
        ? envDir(env, 'APPDATA', join(home, 'AppData', 'Roaming'))
        : envDir(env, 'XDG_CONFIG_HOME', join(home, '.config'));
  const desktop = ['Code', 'Code - Insiders', 'VSCodium', 'Code - OSS'].map((name) => join(config, name));
  const servers = [
    join(envDir(env, 'XDG_DATA_HOME', join(home, '.local', 'share')), 'code-server'),
    join(home, '.vscode-server', 'data'),
    join(home, '.vscode-server-insiders', 'data'),
  ];
  const portable = env['VSCODE_PORTABLE'] !== undefined && env['VSCODE_PORTABLE'] !== '' ? [join(env['VSCODE_PORTABLE'], 'user-data')] : [];
  return [...portable, ...desktop, ...servers];
}

/** The CLI's own base when no VS Code has the extension's storage: `$XDG_STATE_HOME` (or ~/.local/state)/agent-checkpoints. */
export function cliStateBase(env: NodeJS.ProcessEnv = process.env): string {
  return join(envDir(env, 'XDG_STATE_HOME', join(homeOf(env), '.local', 'state')), 'agent-checkpoints');
}

/** The extension's global storage folder in each VS Code build this machine may run. */
export function extensionStorageBases(env: NodeJS.ProcessEnv = process.env): string[] {
  return vscodeUserDataDirs(env).map((dir) => join(dir, 'User', 'globalStorage', EXTENSION_ID));
}

/**
 * Where the CLI looks for a folder's store, in order: the extension's store of the folder in each
 * VS Code, the CLI's own, then where CLIs before this rule wrote (`<state>/<16 hex of the path>`).
 */
export function storeCandidates(workspace: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const key = folderKey({ scheme: 'file', fsPath: workspace, uri: '' });
  const stores = [...extensionStorageBases(env), cliStateBase(env)].map((base) => workspaceStoreDir(base, [key]));
  const legacy = join(cliStateBase(env), createHash('sha256').update(key.slice('file:'.length)).digest('hex').slice(0, 16));
  return [...stores, legacy];
}

/**
 * The CLI's default store for a folder: the first candidate that holds runs; else the folder's
 * store in the first VS Code where the extension has storage; else the CLI's own.
 */
export function defaultStoreDir(workspace: string, env: NodeJS.ProcessEnv = process.env): string {
  const candidates = storeCandidates(workspace, env);
  const withRuns = candidates.find((dir) => existsSync(join(dir, 'runs')));
  if (withRuns !== undefined) return withRuns;
  const bases = extensionStorageBases(env);
  const extension = bases.findIndex((base) => existsSync(base));
  return candidates[extension >= 0 ? extension : bases.length]!;
}
