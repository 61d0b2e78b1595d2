import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { hashContent } from '../../../src/core/patches/hash';
import { applyPreparedWrite } from '../../../src/core/patches/record';
import type { Patch } from '../../../src/core/patches/schema';
import type { LiveFile, Log, Workspace } from '../../../src/core/ports';
import { rollbackFiles } from '../../../src/core/restore/rollback';
import type { PreparedWrite, ToolContext, ToolOutput } from '../../../src/core/tools/types';
import { startMcpServers, type McpConnections } from '../../../src/host/node/mcp/client';
import { parseMcpConfig } from '../../../src/host/node/mcp/config';
import { serverSandbox } from '../../../src/host/node/mcp/server-view';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { detectSandbox, type SandboxRequest } from '../../../src/host/node/sandbox/index';
import { tempDir } from '../../unit/runtime/harness';
import { MemoryBlobs, MemoryJournal, MemoryLog, fixedClock, newId } from '../../unit/patches/fakes';
import { skipWithoutViews } from '../../support/cow-views';

// A stdio MCP server lives in one copy-on-write view of the workspace; what each of its calls
// changed there is applied as patches of that call, checked against the live content, as a
// command's change set is.

const FS_SERVER = resolve(__dirname, 'fs-server.mjs');
const kind = detectSandbox();

describe('MCP server in a copy-on-write view: its changes are patches of the call', function () {
  this.timeout(30_000);
  let base = '';
  let ws = '';
  let mcp: McpConnections | undefined;
  let patches: Patch[] = [];
  let said: string[] = [];
  const blobs = new MemoryBlobs();
  const disk = (): Workspace => new NodeWorkspace({ roots: [ws], ripgrep: null });

  before(function () {
    skipWithoutViews(this);
  });

  beforeEach(async () => {
    base = tempDir('mcp-view');
    ws = join(base, 'ws');
    mkdirSync(ws);
    writeFileSync(join(ws, 'a.txt'), 'one\n');
    writeFileSync(join(ws, 'old.txt'), 'old\n');
    patches = [];
    said = [];
    const request: SandboxRequest = {
      roots: [ws],
      protectedPaths: [],
      hidden: [],
      homePaths: [],
      network: false,
      views: join(base, 'views'),
    };
    const config = { servers: { fs: { command: process.execPath, args: [FS_SERVER] } } };
    const log: Log = { log: (_level, message) => void said.push(message) };
    mcp = await startMcpServers(parseMcpConfig(JSON.stringify(config), 'fs.json', 'cli'), { log, folder: ws, sandbox: () => request });
    assert.deepEqual(mcp.failures, []);
  });
  afterEach(async () => {
    await mcp?.close();
    rmSync(base, { recursive: true, force: true });
  });

  function contextOver(workspace: Workspace, callId: string): ToolContext {
    return {
      workspace,
      callId,
      signal: new AbortController().signal,
      async applyWrite(write: PreparedWrite): Promise<Patch> {
        const ports = { workspace, blobs, clock: fixedClock, log: new MemoryLog(), newId };
        const patch = await applyPreparedWrite(ports, { runId: 'r', stepId: 1, toolCallId: callId }, write);
        patches.push(patch);
        return patch;
      },
    } as unknown as ToolContext;
  }

  async function call(tool: string, input: Record<string, unknown>, callId: string, workspace = disk()): Promise<ToolOutput> {
    const found = mcp!.tools.find((t) => t.name === `fs__${tool}`);
    assert.ok(found, mcp!.tools.map((t) => t.name).join(', '));
    const out = await found.execute(input, contextOver(workspace, callId), []);
    await out.afterRecorded?.();
    return out;
  }

  const read = (path: string): string => readFileSync(join(ws, path), 'utf8');

  it('a write and a removal are patches of that call, a rollback undoes them, and a call that changes nothing reports nothing', async () => {
    assert.ok(
      said.some((line) => /MCP server fs: 4 tools; it sees a copy-on-write view/.test(line)),
      said.join('\n'),
    );
    const first = await call('write', { path: 'a.txt', content: 'two\n' }, 'call-1');
    assert.equal(read('a.txt'), 'two\n');
    assert.match(first.content, /write ok\n--- workspace changes ---\nApplied as patches of this call[^\n]*\n\s+M \S*a\.txt/);
    const second = await call('remove', { path: 'old.txt' }, 'call-2');
    assert.equal(existsSync(join(ws, 'old.txt')), false);
    assert.match(second.content, /D \S*old\.txt/);
    assert.doesNotMatch(second.content, /a\.txt/, 'the file applied by the first call is not reported again');
    assert.deepEqual(
      patches.map((p) => `${p.op} ${p.path} ${p.toolCallId}`),
      ['modify a.txt call-1', 'delete old.txt call-2'],
    );
    const quiet = await call('noop', {}, 'call-3');
    assert.equal(quiet.content, 'noop ok', 'the applied write and the whiteout of a removed file are not reported again');
    assert.equal(patches.length, 2);
    await rollbackFiles(
      { workspace: disk(), blobs, journal: new MemoryJournal(), clock: fixedClock, log: new MemoryLog(), newId },
      { patches, allCheckpoints: [] },
      { kind: 'run' },
    );
    assert.equal(read('a.txt'), 'one\n');
    assert.equal(read('old.txt'), 'old\n');
  });

  it('a write to .vscode/tasks.json (missing before) is refused and named, once; the workspace gets no .vscode/', async () => {
    const out = await call('write', { path: '.vscode/tasks.json', content: '{"tasks":[]}' }, 'call-1');
    assert.match(out.content, /Not applied \(refused[^\n]*\n\s+\.vscode\/tasks\.json: protected path/);
    assert.equal(existsSync(join(ws, '.vscode')), false);
    assert.deepEqual(patches, []);
    const next = await call('noop', {}, 'call-2');
    assert.equal(next.content, 'noop ok', 'a refused change is not offered again at every call');
    assert.equal(existsSync(join(ws, '.vscode')), false);
  });

  it("a write over the person's unsaved buffer is a conflict, not applied, and not re-applied by a later call", async () => {
    const typed = new TextEncoder().encode('one\nmine, unsaved\n');
    const buffers: Workspace = Object.assign(Object.create(disk()) as Workspace, {
      async read(path: string): Promise<LiveFile | null> {
        const live = await NodeWorkspace.prototype.read.call(this, path);
        if (live === null || live.path !== 'a.txt') return live;
        return { ...live, bytes: typed, hash: hashContent(typed), source: 'buffer', dirty: true };
      },
    });
    const out = await call('write', { path: 'a.txt', content: 'server\n' }, 'call-1', buffers);
    assert.match(out.content, /Not applied \(conflict[^\n]*\n\s+\S*a\.txt: it differs from what the command started from/);
    assert.equal(read('a.txt'), 'one\n');
    assert.deepEqual(patches, []);
    const next = await call('noop', {}, 'call-2');
    assert.equal(next.content, 'noop ok');
    assert.equal(read('a.txt'), 'one\n', 'the refused version stays in the view, never applied later');
  });

  it('a file the server wrote before, edited by the person since, written again: a conflict, and the edit stays', async () => {
    await call('write', { path: 'a.txt', content: 'server 1\n' }, 'call-1');
    assert.equal(read('a.txt'), 'server 1\n');
    writeFileSync(join(ws, 'a.txt'), 'person\n');
    const quiet = await call('noop', {}, 'call-2');
    assert.equal(quiet.content, 'noop ok', "the server's older version is not offered over the person's edit");
    assert.equal(read('a.txt'), 'person\n');
    const out = await call('write', { path: 'a.txt', content: 'server 2\n' }, 'call-3');
    assert.match(out.content, /Not applied \(conflict[^\n]*\n\s+\S*a\.txt/);
    assert.equal(read('a.txt'), 'person\n');
    assert.deepEqual(
      patches.map((p) => `${p.op} ${p.path} ${p.toolCallId}`),
      ['modify a.txt call-1'],
    );
  });

  it('a folder removed and made again: what it held is deleted (the merged listing read through the server), once', async () => {
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', 'x.txt'), 'x\n');
    writeFileSync(join(ws, 'sub', 'keep.txt'), 'keep\n');
    const out = await call('replace_dir', { path: 'sub' }, 'call-1');
    assert.deepEqual(readdirSync(join(ws, 'sub')), ['new.txt'], out.content);
    assert.deepEqual(patches.map((p) => `${p.op} ${p.path}`).sort(), ['create sub/new.txt', 'delete sub/keep.txt', 'delete sub/x.txt']);
    const quiet = await call('noop', {}, 'call-2');
    assert.equal(quiet.content, 'noop ok');
  });

  it('the view goes when the session closes the server', async () => {
    await call('write', { path: 'b.txt', content: 'b\n' }, 'call-1');
    await mcp!.close();
    mcp = undefined;
    const views = join(base, 'views');
    assert.deepEqual(existsSync(views) ? readdirSync(views) : [], []);
  });
});

describe('MCP server without a copy-on-write view', () => {
  it('starts with the workspace read-only, and says so', function () {
    if (kind.kind !== 'bwrap') this.skip();
    const ws = tempDir('mcp-noview');
    try {
      const request: SandboxRequest = { roots: [ws], protectedPaths: [], hidden: [], homePaths: [], network: false };
      const sandbox = serverSandbox(request, ws, 'true', () => undefined, 'a test said so');
      assert.ok(sandbox);
      assert.equal(sandbox.view, undefined);
      assert.match(sandbox.note, /no copy-on-write view here \(a test said so\): the workspace is read-only to it/);
      const args = sandbox.launch.args.join(' ');
      assert.ok(args.includes(`--ro-bind ${ws} ${ws}`), args);
      assert.ok(!args.includes(`--bind ${ws} ${ws}`), args);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
