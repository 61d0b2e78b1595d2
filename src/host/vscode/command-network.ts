import type { Log } from '../../core/ports';
import { errorText } from '../../core/error-text';
import { allowlistText, startCommandProxy, type NetProxy } from '../node/netproxy/index';
import { readSettings } from './settings';

// The network proxy of the window's commands and MCP servers with `commandNetwork: allowlist`
// (netproxy/). Started at activation and again when the person's allowed hosts change; until it is
// up, a command gets no network at all (never more than the allowlist). Hosts not on the list are
// refused: the person allows one in user settings (agentCheckpoints.commandAllowedHosts).

export class CommandNetwork {
  private proxy: NetProxy | undefined;
  private startedFor: string | undefined;
  private starting: Promise<void> | undefined;

  constructor(
    /** The run store's address (a folder, or postgres://...): its server is refused, whatever is allowed. */
    private readonly store: string,
    private readonly log: Log,
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
    try {
      const next = await startCommandProxy({
        allowHosts,
        store: this.store,
        howToAllow: (host) => `To allow it, add "${host}" to agentCheckpoints.commandAllowedHosts in your user settings.`,
      });
      const old = this.proxy;
      this.proxy = next;
      this.startedFor = key;
      this.log.log('info', `command network (allowlist): commands reach ${allowlistText(next.rules())}`);
      await old?.close();
    } catch (error) {
      this.log.log('error', `the network proxy of commands did not start (commands get no network): ${errorText(error)}`);
    } finally {
      this.starting = undefined;
    }
  }

  dispose(): void {
    void this.proxy?.close();
    this.proxy = undefined;
  }
}
