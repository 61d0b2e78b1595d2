import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createNodeCommandRunner } from '../../../src/host/node/command-runner';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { atSavePoint, crashingStore } from '../../unit/runtime/crash-store';
import {
  answer,
  byTurn,
  closingAtFirstWrite,
  harness,
  lastToolResults,
  readText,
  reply,
  ScriptedApprover,
  SETTINGS,
  tempDir,
  toolUse,
  type Harness,
} from '../../unit/runtime/harness';
import { skipWithoutViews } from '../../support/cow-views';

// A run cut between a command's capture and the end of its apply: at the next open its change set
// is settled once (what was not applied yet is applied as patches of the call, what was is named),
// the command is not run again, nobody is asked, and the view goes once the result is recorded.
// A host whose window closes while its command runs (VS Code: the extension host terminating, its
// API answering "Canceled") records no failure for the call: the next open settles it the same way,
// while that host's process still lives.

/** The real sandboxed command runner over `root` with its views in `views`, counting the commands it runs. */
function countingRunner(root: string, views: string) {
  let count = 0;
  const real = createNodeCommandRunner({
    sandbox: () => ({ roots: [root], protectedPaths: [], hidden: [], homePaths: [], network: false, views }),
  });
  const commands = {
    run: (command: string, options: Parameters<typeof real.run>[1]) => {
      count += 1;
      return real.run(command, options);
    },
    recover: (callId: string) => real.recover!(callId),
  };
  return { commands, runs: () => count };
}

describe('run_command: a change set cut by the end of its host is settled at the next open', function () {
  this.timeout(30_000);
  let h: Harness | undefined;
  let views = '';
  afterEach(async () => {
    await h?.close();
    h = undefined;
    rmSync(views, { recursive: true, force: true });
  });

  before(function () {
    skipWithoutViews(this);
  });

  it('crash at the first patch of the apply: resume applies the rest once, keeps the file already applied, never runs the command again', async () => {
    views = tempDir('settle-views');
    const approver = new ScriptedApprover(['allow_once'], []);
    h = await harness({
      approver,
      files: { 'a.txt': 'one\n', 'b.txt': 'bee\n' },
      script: byTurn([
        reply([toolUse('t1', 'run_command', { command: 'sed -i s/one/ONE/ a.txt && rm b.txt && echo n > n.txt' })]),
        answer('ok'),
      ]),
    });
    const root = h.root;
    const { commands, runs } = countingRunner(root, views);
    const crashing = crashingStore(h.store, atSavePoint('file_written', 't1') as never);
    const first = await h.runtime({ store: crashing, commands }).start({ task: 'task', settings: SETTINGS });
    assert.equal(first.status, 'paused');
    assert.equal(readdirSync(views).length, 1, 'the view waits for the resume');
    const second = await h.runtime({ commands }).resume(first.runId);
    assert.equal(second.status, 'completed');
    assert.equal(runs(), 1, 'the command ran once');
    assert.equal(approver.uncertain.length, 0, 'nobody was asked');
    const [result] = lastToolResults(h.fake, 1);
    assert.match(result!.content, /^execution status unknown[\s\S]*was not run again[\s\S]*applied now/);
    assert.match(result!.content, /a file applied before the interruption stays as it is/);
    assert.equal(readText(root, 'n.txt'), 'n\n');
    assert.equal(readText(root, 'a.txt'), 'ONE\n');
    assert.equal(existsSync(join(root, 'b.txt')), false);
    const state = await h.store.readRun(first.runId);
    const patched = state.patches.map((p) => `${p.op} ${p.path}`).sort();
    assert.equal(new Set(patched).size, patched.length, 'no file patched twice');
    assert.ok(patched.includes('create n.txt'), patched.join(', '));
    assert.equal(state.ledger[0]!.status, 'uncertain');
    assert.deepEqual(readdirSync(views), [], 'the view is gone once the result is recorded');
  });

  it('the window closes during the command, its apply refused: no failure recorded; resume applies what it wrote once, nobody asked', async () => {
    views = tempDir('settle-views');
    const approver = new ScriptedApprover(['allow_once'], []);
    h = await harness({
      approver,
      script: byTurn([reply([toolUse('t1', 'run_command', { command: 'echo ran >> marker.txt' })]), answer('ok')]),
    });
    const root = h.root;
    const { commands, runs } = countingRunner(root, views);
    const closing = new AbortController();
    const workspace = closingAtFirstWrite(new NodeWorkspace({ roots: [root] }), closing);
    const first = await h.runtime({ commands, workspace }).start({ task: 'task', settings: SETTINGS }, closing.signal);
    assert.equal(first.status, 'paused');
    const cut = await h.store.readRun(first.runId);
    assert.equal(cut.status, 'interrupted');
    assert.equal(cut.ledger[0]!.status, 'started', `the closing host recorded no outcome: ${cut.ledger[0]!.error ?? ''}`);
    assert.equal(existsSync(join(root, 'marker.txt')), false);
    assert.equal(readdirSync(views).length, 1, 'the view waits for the resume');
    // The closing host's process may live on for seconds after its window reopened: the resume
    // (another process) must not wait for it. Its view, as that process would have named it:
    const [name] = readdirSync(views);
    renameSync(join(views, name!), join(views, name!.replace(/^\d+-/, `${process.ppid}-`)));

    const second = await h.runtime({ commands }).resume(first.runId);
    assert.equal(second.status, 'completed');
    assert.equal(runs(), 1, 'the command ran once');
    assert.equal(approver.uncertain.length, 0, 'nobody was asked');
    assert.equal(readText(root, 'marker.txt'), 'ran\n', 'what it wrote is applied once');
    const [result] = lastToolResults(h.fake, 1);
    assert.match(result!.content, /^execution status unknown[\s\S]*applied now/);
    assert.doesNotMatch(result!.content, /Canceled/);
    const state = await h.store.readRun(first.runId);
    assert.deepEqual(
      state.patches.map((p) => `${p.op} ${p.path}`),
      ['create marker.txt'],
    );
    assert.deepEqual(readdirSync(views), [], 'the view is gone once the result is recorded');
  });
});
