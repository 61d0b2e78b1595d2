import { strict as assert } from 'node:assert';
import { CliEvent } from '../../../src/host/cli/output';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATUS_UNKNOWN_MESSAGE } from '../../../src/core/runtime/reconcile';
import { startFakeAnthropic, type RecordedRequest } from '../../support/fake-anthropic/server';
import { sharedCli, startCli } from '../../support/cli-process';
import { tempDir } from '../../unit/runtime/harness';
import { memoryConfig } from './memory-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens the FIFO for writing once a reader holds it (ENXIO until then); undefined after `ms`. */
async function openWhenRead(fifo: string, ms: number): Promise<number | undefined> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
    }
  }
  return undefined;
}

function toolResultsOf(request: RecordedRequest): { tool_use_id: string; content: string; is_error?: boolean }[] {
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  return messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: { type: string }) => b.type === 'tool_result');
}

/** `tool callId status` of each call event a `--json` run printed (a line cut by a kill is skipped). */
function callsOf(stdout: string): string[] {
  return stdout.split('\n').flatMap((line) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return [];
    }
    const event = CliEvent.safeParse(parsed);
    return event.success && event.data.type === 'call' ? [`${event.data.tool} ${event.data.callId} ${event.data.status}`] : [];
  });
}

describe('CLI with MCP servers (the real memory server over stdio)', function () {
  this.timeout(90_000);
  let bundle: string;
  let scratch: string;

  before(async () => {
    scratch = tempDir('cli-mcp');
    bundle = await sharedCli();
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  const start = (args: string[]) => startCli(bundle, args, { PATH: process.env['PATH'], HOME: scratch, ANTHROPIC_API_KEY: 'sk-mcp-test' });

  it('a bad --mcp-config is refused naming the file and field, and nothing runs', async () => {
    const ws = tempDir('cli-mcp-ws');
    const config = join(scratch, 'bad-mcp.json');
    writeFileSync(config, JSON.stringify({ servers: { memory: { command: '' } } }));
    const fake = await startFakeAnthropic([]);
    try {
      const args = ['run', '--workspace', ws, '--store', join(scratch, 'bad-store'), '--base-url', fake.url, '--trust', '--task', 't'];
      const result = await start([...args, '--mcp-config', config]).done;
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`error: ${config.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: servers\\.memory\\.command`));
      assert.equal(fake.requests.length, 0, 'no model call');
      // An untrusted workspace's own .vscode/mcp.json is never read: the trust gate comes first.
      const untrusted = await start(args.filter((a) => a !== '--trust')).done;
      assert.equal(untrusted.code, 2);
      assert.match(untrusted.stderr, /is not trusted/);
    } finally {
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it("a trusted workspace's .vscode/mcp.json servers serve the run (read-only: no approval needed)", async () => {
    const ws = tempDir('cli-mcp-ws');
    mkdirSync(join(ws, '.vscode'));
    writeFileSync(join(ws, '.vscode', 'mcp.json'), memoryConfig(join(scratch, 'ws-memory.jsonl')));
    const fake = await startFakeAnthropic([
      { content: [{ type: 'tool_use', id: 'toolu_graph', name: 'memory__read_graph', input: {} }], stop_reason: 'tool_use' },
      { content: [{ type: 'text', text: 'done' }] },
    ]);
    try {
      const args = [
        'run',
        '--workspace',
        ws,
        '--store',
        join(scratch, 'ws-store'),
        '--base-url',
        fake.url,
        '--trust',
        '--task',
        'read',
        '--json',
        '--allow-workspace-mcp',
        'memory',
      ];
      const result = await start(args).done;
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /mcp: 9 tools from 1 of 1 server\b/);
      assert.ok(callsOf(result.stdout).includes('memory__read_graph toolu_graph succeeded'), result.stdout);
      const names = ((fake.requests[0]!.body as { tools: { name: string }[] }).tools ?? []).map((t) => t.name);
      assert.ok(names.includes('memory__create_entities') && names.includes('read_file'), names.join(', '));
    } finally {
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it("--trust alone starts none of the workspace's .vscode/mcp.json servers: without a terminal or --allow-workspace-mcp nothing of it runs", async () => {
    const ws = tempDir('cli-mcp-ws');
    const marker = join(tempDir('cli-mcp-marker'), 'server-ran');
    mkdirSync(join(ws, '.vscode'));
    writeFileSync(
      join(ws, '.vscode', 'mcp.json'),
      JSON.stringify({ servers: { evil: { command: 'sh', args: ['-c', `touch '${marker}'; sleep 5`] } } }),
    );
    const fake = await startFakeAnthropic([{ content: [{ type: 'text', text: 'done' }] }]);
    try {
      const args = [
        'run',
        '--workspace',
        ws,
        '--store',
        join(scratch, 'evil-store'),
        '--base-url',
        fake.url,
        '--trust',
        '--yes',
        '--task',
        't',
      ];
      const result = await start(args).done;
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /MCP server "evil" of .*mcp\.json not started: .*--allow-workspace-mcp evil/);
      await sleep(300); // a server started late would have written by now: the test is that none does
      assert.equal(existsSync(marker), false, "the workspace's server ran");
    } finally {
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('an allowed MCP server runs in the sandbox, as commands do: it cannot write .vscode/, a missing .envrc or the home folder; what its call wrote is a patch of the call', async () => {
    const ws = tempDir('cli-mcp-ws');
    mkdirSync(join(ws, '.vscode'));
    const server = { command: process.execPath, args: [join(__dirname, 'fs-server.mjs')] };
    writeFileSync(join(ws, '.vscode', 'mcp.json'), JSON.stringify({ servers: { probe: server } }));
    const write = (id: string, path: string) => ({
      content: [{ type: 'tool_use' as const, id, name: 'probe__write', input: { path, content: 'owned\n' } }],
      stop_reason: 'tool_use' as const,
    });
    const fake = await startFakeAnthropic([
      write('toolu_settings', '.vscode/settings.json'),
      write('toolu_envrc', '.envrc'),
      write('toolu_home', join(scratch, 'owned')),
      write('toolu_ran', 'ran.txt'),
      { content: [{ type: 'text', text: 'done' }] },
    ]);
    try {
      const args = [
        'run',
        '--workspace',
        ws,
        '--store',
        join(scratch, 'probe-store'),
        '--base-url',
        fake.url,
        '--trust',
        '--yes',
        '--task',
        't',
      ];
      const result = await start([...args, '--allow-workspace-mcp', 'probe']).done;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(readFileSync(join(ws, 'ran.txt'), 'utf8'), 'owned\n', 'the server ran, in the workspace');
      assert.equal(existsSync(join(ws, '.vscode', 'settings.json')), false);
      assert.equal(existsSync(join(ws, '.envrc')), false);
      assert.equal(existsSync(join(scratch, 'owned')), false);
      const results = fake.requests.flatMap(toolResultsOf);
      const of = (id: string): string => results.find((b) => b.tool_use_id === id)?.content ?? '';
      assert.match(of('toolu_settings'), /write failed: .*read-only file system/i);
      assert.match(of('toolu_envrc'), /Not applied \(refused[^\n]*\n\s+\.envrc: protected path/);
      assert.match(of('toolu_ran'), /Applied as patches of this call[^\n]*\n\s+A \S*ran\.txt/);
    } finally {
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('kill -9 during a non-idempotent MCP call, then resume: the call is not run again, the model hears status unknown, the servers start again', async () => {
    const ws = tempDir('cli-mcp-ws');
    const store = join(scratch, 'store-kill');
    // The memory file is a FIFO: the server's read blocks inside the call until the test writes, so the kill lands mid-call.
    const memory = join(scratch, 'memory.jsonl');
    execFileSync('mkfifo', [memory]);
    const config = join(scratch, 'mcp.json');
    writeFileSync(config, memoryConfig(memory));
    const entity = { entities: [{ name: 'Ada', entityType: 'person', observations: ['once'] }] };
    const fake = await startFakeAnthropic([
      { content: [{ type: 'tool_use', id: 'toolu_mem', name: 'memory__create_entities', input: entity }], stop_reason: 'tool_use' },
      { content: [{ type: 'tool_use', id: 'toolu_read', name: 'memory__read_graph', input: {} }], stop_reason: 'tool_use' },
      { content: [{ type: 'text', text: 'done' }] },
    ]);
    // --no-sandbox: the server's memory file is a FIFO of the test's, under a /tmp the sandbox makes private.
    const common = [
      '--workspace',
      ws,
      '--store',
      store,
      '--base-url',
      fake.url,
      '--yes',
      '--trust',
      '--mcp-config',
      config,
      '--json',
      '--no-sandbox',
    ];
    const first = start(['run', ...common, '--task', 'remember Ada']);
    let writer: number | undefined;
    try {
      writer = await openWhenRead(memory, 30_000);
      if (writer === undefined) {
        first.proc.kill('SIGKILL');
        assert.fail(`the server never reached the call: ${(await first.done).stderr}`);
      }
      process.kill(first.proc.pid!, 'SIGKILL');
      const killed = await first.done;
      const before = callsOf(killed.stdout);
      assert.ok(before.includes('memory__create_entities toolu_mem started'), killed.stdout);
      assert.ok(!before.some((c) => /toolu_mem (succeeded|failed)/.test(c)), killed.stdout);
      // Let the cut call finish on the orphaned server (it took effect: the outcome really is unknown), then erase its
      // effect, so that a second execution would show as a new memory file.
      closeSync(writer);
      writer = undefined;
      for (let i = 0; i < 200 && !(existsSync(memory) && statSync(memory).isFile()); i++) await sleep(50);
      assert.match(readFileSync(memory, 'utf8'), /"Ada"/);
      rmSync(memory);

      const resumed = await start(['resume', ...common]).done;
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /mcp: 9 tools from 1 of 1 server\b/);
      const after = callsOf(resumed.stdout);
      assert.ok(after.includes('memory__create_entities toolu_mem uncertain'), resumed.stdout);
      assert.ok(after.includes('memory__read_graph toolu_read succeeded'), resumed.stdout);
      assert.equal(existsSync(memory), false, 'create_entities did not run again');
      const heard = toolResultsOf(fake.requests[1]!).find((b) => b.tool_use_id === 'toolu_mem');
      // The status first; the recovery note rides in the last tool_result (never as text after the results).
      const parts = Array.isArray(heard?.content)
        ? (heard.content as { type: string; text: string }[])
        : [{ type: 'text', text: heard?.content }];
      assert.equal(parts[0]?.text, STATUS_UNKNOWN_MESSAGE);
      assert.ok(
        parts.some((p) => p.text?.startsWith('[recovery note]')),
        JSON.stringify(parts),
      );
      assert.equal(heard?.is_error, true);
      const graph = toolResultsOf(fake.requests[2]!).find((b) => b.tool_use_id === 'toolu_read');
      assert.match(graph?.content ?? '', /"entities":\s*\[\]/, 'the read-only tool ran on the restarted server');
    } finally {
      if (writer !== undefined) closeSync(writer);
      first.proc.kill('SIGKILL');
      await fake.close();
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
