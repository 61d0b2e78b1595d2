import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The per-user store folder of a workspace, outside it: `$XDG_STATE_HOME` (or ~/.local/state)
 * / agent-checkpoints / <hash of the workspace's real path>.
 */
export function defaultStoreDir(workspace: string, env: NodeJS.ProcessEnv = process.env): string {
  let real = resolve(workspace);
  try {
    real = realpathSync(real);
  } catch {
    // A missing folder keeps its resolved path; the caller reports it.
  }
  const key = createHash('sha256').update(real).digest('hex').slice(0, 16);
  const base =
    env['XDG_STATE_HOME'] !== undefined && env['XDG_STATE_HOME'] !== '' ? env['XDG_STATE_HOME'] : join(homedir(), '.local', 'state');
  return join(base, 'agent-checkpoints', key);
}
