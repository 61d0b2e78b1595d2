import { resolve } from 'node:path';

/** The reference memory server from the npm registry (a devDependency), run over stdio by this Node. */
export const MEMORY_SERVER = resolve(__dirname, '../../../node_modules/@modelcontextprotocol/server-memory/dist/index.js');

/** An mcp.json naming the memory server `memory`, keeping its graph in `memoryFile`. */
export function memoryConfig(memoryFile: string): string {
  return JSON.stringify({
    servers: { memory: { command: process.execPath, args: [MEMORY_SERVER], env: { MEMORY_FILE_PATH: memoryFile } } },
  });
}
