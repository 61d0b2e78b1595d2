import { strict as assert } from 'node:assert';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerEntry } from '../../../src/core/ledger/schema';
import type { CommandRunner } from '../../../src/core/ports';
import { effectsAfter, restoreBoth } from '../../../src/core/restore/session';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { FORWARDER_PORT } from '../../../src/host/node/netproxy/forwarder';
import { startNetProxy, type NetProxy } from '../../../src/host/node/netproxy/index';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { detectSandbox, noViewReason, type SandboxRequest } from '../../../src/host/node/sandbox/index';
import { effectOf } from '../../../src/host/vscode/timeline/view-build';
import { answer, harness, readText, reply, ScriptedApprover, SETTINGS, tempDir, toolUse, type Harness } from '../../unit/runtime/harness';
import { MemoryLog, newId } from '../../unit/patches/fakes';

// A command whose every change is a patch of its call is no external effect (issue 45, item 4):
// it ran in a copy-on-write view with nothing writable outside the workspace and no network, and
// all it changed came back as patches. The restore preview, the Timeline and the undo list then
// leave it out, and Restore puts its files back. Anything else the sandbox cannot vouch for stays
// an external effect.

const FILES = { 'CONTRIBUTING.md': 'Use tabs.\n', '.gitignore': 'build/\n', 'run.sh': 'echo hi\n' };

describe('run_command: a command held by its patches is no external effect', function () {
  this.timeout(30_000);
  let h: Harness | undefined;
  let base = '';

  before(function () {
    const probe = tempDir('contained-probe');
    mkdirSync(join(probe, 'ws'));
    const request = { roots: [join(probe, 'ws')], protectedPaths: [], hidden: [], homePaths: [], network: false, views: join(probe, 'v') };
    const why = noViewReason(detectSandbox(), request);
    rmSync(probe, { recursive: true, force: true });
    if (why !== undefined) {
      console.log(`      (skipped: no copy-on-write view here: ${why})`);
      this.skip();
    }
  });
  beforeEach(() => {
    base = tempDir('contained');
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    rmSync(base, { recursive: true, force: true });
  });

  /** A runner in the sandbox over the harness's workspace, with `extra` in its request. */
  function sandboxed(root: string, extra: Partial<SandboxRequest> = {}): CommandRunner {
    const request = (): SandboxRequest => ({
      roots: [root],
      protectedPaths: [],
      hidden: [],
      homePaths: [],
      network: false,
      views: join(base, 'views'),
      ...extra,
    });
    return createNodeCommandRunner({ env: { PATH: process.env['PATH'], HOME: base }, sandbox: request });
  }

  /** Runs one instruction whose only call is `command`; the run, its ledger entry, and what a restore to its start leaves. */
  async function runCommand(command: string, runner?: (root: string) => CommandRunner) {
    h = await harness({
      store: 'file',
      files: FILES,
      script: [reply([toolUse('c1', 'run_command', { command })]), answer('done')],
      approver: new ScriptedApprover(['allow_once']),
    });
    const runtime = h.runtime(runner !== undefined ? { commands: runner(h.root) } : {});
    const done = await runtime.start({ task: 'use spaces', settings: SETTINGS });
    assert.equal(done.status, 'completed', done.reason);
    const state = await h.store.readRun(done.runId);
    const entry = state.ledger.find((e) => e.callId === 'c1')!;
    const start = state.allCheckpoints[0]!.checkpointId;
    const effects = effectsAfter(await h.records(done.runId), state, start);
    return { runId: done.runId, state, entry, start, effects };
  }

  function assertExternal(entry: LedgerEntry, effects: readonly { callId: string }[], why: string): void {
    assert.notEqual(entry.contained, true, why);
    assert.deepEqual(
      effects.map((e) => e.callId),
      ['c1'],
      `${why}: listed as an effect a restore leaves`,
    );
    assert.notEqual(effectOf(entry), undefined, `${why}: the Timeline counts it`);
  }

  it('sed -i in the view: contained, not listed as an effect, and Restore puts the file back', async () => {
    const { runId, state, entry, start, effects } = await runCommand("sed -i 's/tabs/spaces/' CONTRIBUTING.md", sandboxed);
    assert.equal(readText(h!.root, 'CONTRIBUTING.md'), 'Use spaces.\n');
    assert.equal(entry.contained, true);
    assert.deepEqual(effects, [], 'the restore preview and its note leave it out');
    assert.equal(effectOf(entry), undefined, 'the Timeline neither marks nor counts it');
    assert.equal(state.patches.filter((p) => p.toolCallId === 'c1').length, 1, 'its change is a patch of the call');

    const writer = await h!.store.openWriter(runId);
    const workspace = new NodeWorkspace({ roots: [h!.root] });
    const deps = { workspace, blobs: h!.store, journal: writer, clock: { now: () => Date.now() }, log: new MemoryLog(), newId };
    const restored = await restoreBoth(deps, await h!.records(runId), state, start);
    await writer.close();
    assert.equal(readText(h!.root, 'CONTRIBUTING.md'), 'Use tabs.\n', 'Restore brought the file back');
    assert.deepEqual(restored.session.effects, [], 'nothing left in the world to name');
  });

  it('the same with a write to an ignored path: that write has no patch, so the call stays external', async () => {
    const { entry, effects } = await runCommand(
      "sed -i 's/tabs/spaces/' CONTRIBUTING.md && mkdir -p build && echo x > build/out.txt",
      sandboxed,
    );
    assert.equal(readText(h!.root, 'build/out.txt'), 'x\n', 'the ignored path reached the workspace');
    assertExternal(entry, effects, 'an ignored path changed');
  });

  it('chmod +x: a patch holds the executable bit, so the call is contained', async () => {
    const { entry, effects, state } = await runCommand('chmod +x run.sh', sandboxed);
    assert.equal(state.patches.filter((p) => p.toolCallId === 'c1').length, 1, 'a mode-only patch');
    assert.equal(entry.contained, true);
    assert.deepEqual(effects, []);
  });

  it('with the network on, or a writable folder of the home granted, it stays external', async () => {
    const networked = await runCommand("sed -i 's/tabs/spaces/' CONTRIBUTING.md", (root) => sandboxed(root, { network: true }));
    assertExternal(networked.entry, networked.effects, 'the network was on');
    await h!.close();
    mkdirSync(join(base, 'cache'));
    const home = await runCommand("sed -i 's/tabs/spaces/' CONTRIBUTING.md", (root) =>
      sandboxed(root, { homePaths: ['cache'], home: base }),
    );
    assertExternal(home.entry, home.effects, 'a home folder was writable');
  });

  it('unsandboxed, it stays external', async () => {
    const { entry, effects } = await runCommand("sed -i 's/tabs/spaces/' CONTRIBUTING.md");
    assert.equal(readText(h!.root, 'CONTRIBUTING.md'), 'Use spaces.\n');
    assertExternal(entry, effects, 'no sandbox');
  });

  describe('with the allowlist proxy', () => {
    let proxy: NetProxy | undefined;
    beforeEach(async () => {
      proxy = await startNetProxy({ rules: [], howToAllow: () => 'not here' });
    });
    afterEach(async () => {
      await proxy?.close();
    });
    const through = (root: string): CommandRunner => sandboxed(root, { proxy: proxy! });

    it('a command that made no connection is contained', async () => {
      const { entry, effects } = await runCommand("sed -i 's/tabs/spaces/' CONTRIBUTING.md", through);
      assert.equal(entry.contained, true);
      assert.deepEqual(effects, []);
    });

    it('a command that reached the proxy (even a refused request) stays external', async () => {
      const request = `printf 'GET http://example.invalid/ HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3`;
      const command = `sed -i 's/tabs/spaces/' CONTRIBUTING.md && bash -c 'exec 3<>/dev/tcp/127.0.0.1/${FORWARDER_PORT}; ${request}'`;
      const { entry, effects } = await runCommand(command, through);
      assertExternal(entry, effects, 'the proxy accepted a connection while it ran');
    });
  });
});
