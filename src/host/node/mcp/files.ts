import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { McpConfigError, mergeEntries, parseMcpConfig, type McpServerEntry, type McpSource } from './config';

// Reading mcp.json files from disk: regular files only, bounded, never following a FIFO or a device.

const MAX_BYTES = 256 * 1024;

/** The workspace's own MCP file, as VS Code names it. */
export function workspaceMcpFile(folder: string): string {
  return join(folder, '.vscode', 'mcp.json');
}

/** The text of `path`, or undefined when it does not exist (and `optional`). */
export function readConfigText(path: string, optional: boolean): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new McpConfigError(`${path}: not a regular file`);
    if (stat.size > MAX_BYTES) throw new McpConfigError(`${path}: larger than ${MAX_BYTES} bytes`);
    const buffer = Buffer.alloc(stat.size);
    return buffer.subarray(0, readSync(fd, buffer, 0, stat.size, 0)).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      if (optional) return undefined;
      throw new McpConfigError(`${path}: no such file`);
    }
    throw error;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function readConfigFile(path: string, source: McpSource, optional: boolean): McpServerEntry[] {
  const text = readConfigText(path, optional);
  return text === undefined ? [] : parseMcpConfig(text, path, source);
}

/**
 * The CLI's servers: the file of `--mcp-config` (the person's own), then the workspace's
 * `.vscode/mcp.json`. The caller has already passed the workspace trust gate (cli/trust.ts): in
 * the CLI that gate is the person's allowance of the workspace's servers.
 */
export function cliMcpServers(folder: string, configFile: string | undefined): McpServerEntry[] {
  const own = configFile !== undefined ? readConfigFile(configFile, 'cli', false) : [];
  return mergeEntries(own, readConfigFile(workspaceMcpFile(folder), 'workspace', true));
}
