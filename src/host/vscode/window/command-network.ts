import type { Log } from '../../../core/ports';
import { errorText } from '../../../core/error-text';
import { allowlistText, startCommandProxy, type NetProxy } from '../../node/netproxy/index';
import { parseHostRule } from '../../node/netproxy/policy';
import type { Prompts } from './prompts';
import { readSettings } from './settings';
import { ALLOWED_HOSTS_KEY, askForHost, type UserMemory } from './network-question';

// The network proxy of the window's commands and MCP servers with `commandNetwork: allowlist`
// (netproxy/). Started at activation and again when the person's allowed hosts change; until it is
// up, a command gets no network at all (never more than the allowlist). A host not on the list is
// asked about once per window (a notification: Allow, Allow for This Workspace, Refuse); "for this
// workspace" is kept in the extension's global state (user scope: no workspace file can add to it).

/** How a person adds a host in the editor (the CLI's way is its --allow-host flag). */
const HOW_TO_ADD = 'when a command asks, or in agentCheckpoints.commandAllowedHosts';

export class CommandNetwork {
  private proxy: NetProxy | undefined;
  private startedFor: string | undefined;
  private starting: Promise<void> | undefined;

  constructor(
    private readonly options: {
      /** The run store's address (a folder, or postgres://...): its server is refused, whatever is allowed. */
      readonly store: string;
      readonly log: Log;
      readonly prompts: Prompts;
      readonly memory: UserMemory;
      /** The workspace's key, for "Allow for This Workspace". */
      readonly workspace: string;
    },
  ) {}

  /** The proxy for the next command (undefined until it is up, or with another commandNetwork); starts or restarts it when needed. */
  current(): NetProxy | undefined {
    const settings = readSettings();
    if (settings.commandNetwork !== 'allowlist') return undefined;
    const key = settings.commandAllowedHosts.join('\n');
    if (key !== this.startedFor && this.starting === undefined) this.starting = this.start(settings.commandAllowedHosts, key);
    return this.startedFor === key ? this.proxy : undefined;
  }

  private async start(allowHosts: readonly string[], key: string): Promise<void> {
    const { store, log, prompts, memory, workspace } = this.options;
    try {
      const next = await startCommandProxy({
        allowHosts,
        approvedHosts: memory.get<Record<string, string[]>>(ALLOWED_HOSTS_KEY)?.[workspace] ?? [],
        store,
        ask: (host, port) => askForHost(prompts, memory, workspace, host, port),
        howToAllow: (host) =>
          `To allow it, answer the question about it, or add "${host}" to agentCheckpoints.commandAllowedHosts in your user settings.`,
      });
      const old = this.proxy;
      this.proxy = next;
      this.startedFor = key;
      log.log('info', `command network (allowlist): commands reach ${allowlistText(next.rules(), HOW_TO_ADD)}`);
      await old?.close();
    } catch (error) {
      log.log('error', `the network proxy of commands did not start (commands get no network): ${errorText(error)}`);
    } finally {
      this.starting = undefined;
    }
  }

  /**
   * The person allowed hosts the proxy refused (a refused call's row in the Timeline): kept for this
   * workspace, as "Allow for This Workspace" is, and allowed by the running proxy at once. Public
   * addresses only, as a host approved at the question; says what it did.
   */
  async allow(targets: readonly string[]): Promise<string> {
    const rules = targets.map((t) => ({ text: t, rule: parseHostRule(t, 'allowed from the Timeline') }));
    const bad = rules.find((r) => r.rule === undefined);
    if (bad !== undefined) throw new Error(`"${bad.text}" is not a host name or HOST:PORT; nothing was allowed.`);
    const { memory, workspace } = this.options;
    const all = memory.get<Record<string, string[]>>(ALLOWED_HOSTS_KEY) ?? {};
    const list = all[workspace] ?? [];
    const added = rules.map((r) => `${r.rule!.host}:${r.rule!.port ?? 443}`).filter((t) => !list.includes(t));
    if (added.length > 0) await memory.update(ALLOWED_HOSTS_KEY, { ...all, [workspace]: [...list, ...added] });
    for (const { rule } of rules) this.proxy?.allow({ ...rule!, named: false });
    const names = targets.join(', ');
    return `Allowed ${names} for this workspace: the next command can reach ${targets.length === 1 ? 'it' : 'them'} (public addresses only). Ask the agent to try again.`;
  }

  /** The allowlist as a run records it at its start, or undefined without the allowlist proxy. */
  allowlist(): string | undefined {
    const proxy = this.current();
    return proxy !== undefined ? allowlistText(proxy.rules(), HOW_TO_ADD) : undefined;
  }

  dispose(): void {
    void this.proxy?.close();
    this.proxy = undefined;
  }
}
