// A stdio MCP server for tests whose tools change files under its working folder:
// write {path, content}, remove {path}, noop {}, replace_dir {path} (a relative path is in the working folder).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'fs', version: '1.0.0' }, { capabilities: { tools: {} } });
const object = (properties) => ({ type: 'object', properties, additionalProperties: false });
const text = { type: 'string' };

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'write', description: 'write a file', inputSchema: object({ path: text, content: text }) },
    { name: 'remove', description: 'remove a file', inputSchema: object({ path: text }) },
    { name: 'noop', description: 'change nothing', inputSchema: object({}) },
    { name: 'replace_dir', description: 'remove a folder, make it again with one file', inputSchema: object({ path: text }) },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = request.params.arguments ?? {};
  const path = typeof args.path === 'string' ? resolve(process.cwd(), args.path) : '';
  try {
    if (request.params.name === 'write') {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, String(args.content));
    } else if (request.params.name === 'remove') rmSync(path);
    else if (request.params.name === 'replace_dir') {
      rmSync(path, { recursive: true });
      mkdirSync(path);
      writeFileSync(join(path, 'new.txt'), 'new\n');
    }
    return { content: [{ type: 'text', text: `${request.params.name} ok` }] };
  } catch (error) {
    return { content: [{ type: 'text', text: `${request.params.name} failed: ${error.message}` }], isError: true };
  }
});

await server.connect(new StdioServerTransport());
