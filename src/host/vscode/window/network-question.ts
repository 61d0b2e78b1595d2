import type { Prompts } from './prompts';

// The question a host not on the commands' network allowlist raises in VS Code (command-network.ts),
// apart from `vscode` so the decision is unit-tested.

/** Where "Allow for This Workspace" answers are kept: workspace key -> HOST:PORT list. */
export const ALLOWED_HOSTS_KEY = 'agentCheckpoints.network.allowedHosts';

/** The extension's user-scope memory (VS Code's globalState). */
export interface UserMemory {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

export const ALLOW = 'Allow';
export const ALLOW_WORKSPACE = 'Allow for This Workspace';
export const REFUSE = 'Refuse';

/**
 * Asks the person about one host a command wants to reach; remembers "for this workspace". A
 * dismissed question is a refusal (the command gets a 403 that says how to allow the host).
 */
export async function askForHost(prompts: Prompts, memory: UserMemory, workspace: string, host: string, port: number): Promise<boolean> {
  const target = `${host}:${port}`;
  const answer = await prompts.message(
    'warning',
    `A command of the agent wants to reach ${target}, which is not on the network allowlist.`,
    {
      detail:
        'Allow only a host you expect this task to need: what a command can read (workspace files included) can be sent there. An allowed host reaches public addresses only; your machine and private networks need agentCheckpoints.commandAllowedHosts.',
    },
    ALLOW,
    ALLOW_WORKSPACE,
    REFUSE,
  );
  if (answer === ALLOW_WORKSPACE) {
    const all = memory.get<Record<string, string[]>>(ALLOWED_HOSTS_KEY) ?? {};
    const list = all[workspace] ?? [];
    if (!list.includes(target)) await memory.update(ALLOWED_HOSTS_KEY, { ...all, [workspace]: [...list, target] });
  }
  return answer === ALLOW || answer === ALLOW_WORKSPACE;
}
