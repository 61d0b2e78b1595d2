import type { Log } from '../../../core/ports';
import { BUILTIN_TOOLS } from '../../../core/tools/registry';
import type * as McpClient from '../mcp/client';
import type { McpConnections } from '../mcp/client';
import type { McpServerEntry } from '../mcp/config';
import type { CommandLaunch } from './commands';

// The MCP servers of a session (already allowed by the person: the CLI asks on its terminal, the
// extension in a notification), started in the commands' sandbox with the variables commands get,
// and closed when the session ends.

/** Starts the allowed servers; their tools never take a built-in tool's name. */
export async function startMcp(
  entries: readonly McpServerEntry[],
  options: {
    readonly log: Log;
    readonly folder?: string | undefined;
    readonly launch: Pick<CommandLaunch, 'sandbox' | 'passEnv'>;
    /** The MCP client's module: the CLI loads it only when a server is named (its SDK costs every start ~100 ms); the extension bundles it. */
    readonly client: () => Promise<Pick<typeof McpClient, 'startMcpServers'>>;
  },
): Promise<McpConnections> {
  if (entries.length === 0) return { tools: [], failures: [], close: async () => undefined };
  const { startMcpServers } = await options.client();
  return startMcpServers(entries, {
    log: options.log,
    reserved: BUILTIN_TOOLS.map((t) => t.name),
    ...(options.folder !== undefined ? { folder: options.folder } : {}),
    sandbox: options.launch.sandbox,
    passEnv: options.launch.passEnv(),
  });
}
