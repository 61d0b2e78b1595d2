import { strict as assert } from 'node:assert';
import { buildRunView, runDelta } from '../../../src/host/vscode/timeline/view-build';
import type { RequestMessage } from '../../../src/protocol/messages';
import type { RunStatus } from '../../../src/core/store/records';
import { dispatchHostMessage, type DispatchDeps } from '../../../src/webview/dispatch';
import { TimelineModel } from '../../../src/webview/model';
import { LEDGER_LOOK, PATCH_LOOK, describeRow } from '../../../src/webview/rowContent';
import { Rpc } from '../../../src/webview/rpc';
import { EMPTY_STATE, loadState, newlySeen } from '../../../src/webview/state';
import { contextOf, flatten, rowKey } from '../../../src/webview/tree';
import { sampleRun } from './fixtures';

function harness() {
  const posted: RequestMessage[] = [];
  const events: string[] = [];
  const errors: string[] = [];
  const model = new TimelineModel();
  const rpc = new Rpc((m) => posted.push(m), 1000);
  const deps: DispatchDeps = {
    model,
    rpc,
    changed: (r) => events.push(r),
    notice: (l, t) => events.push(`${l}:${t}`),
    selected: (runId) => events.push(`selected:${runId}`),
    logError: (t) => errors.push(t),
  };
  return { posted, events, errors, model, rpc, deps };
}

describe('webview: host messages', () => {
  const first = sampleRun(5, { runId: 'a' });
  const viewA = buildRunView(first.state, first.live, false);

  it('applies a snapshot, a delta and a live change', () => {
    const h = harness();
    assert.ok(dispatchHostMessage({ type: 'snapshot', runs: [viewA] }, h.deps));
    const next = buildRunView(sampleRun(7, { runId: 'a' }).state, first.live, false);
    assert.ok(dispatchHostMessage(runDelta(viewA, next), h.deps));
    assert.equal(h.model.get('a')!.steps.length, 8);
    assert.ok(dispatchHostMessage({ type: 'patchLive', runId: 'a', changes: [{ patchId: 'patch-1', state: 'conflict' }] }, h.deps));
    assert.equal(h.model.get('a')!.steps[1]!.calls[0]!.patches[0]!.state, 'conflict');
    assert.deepEqual(h.events, ['snapshot', 'delta', 'live']);
    assert.deepEqual(h.errors, []);
  });

  it('rejects a malformed message: logged, and nothing else happens', () => {
    const h = harness();
    dispatchHostMessage({ type: 'snapshot', runs: [viewA] }, h.deps);
    const before = JSON.stringify(h.model.list());
    const bad = [
      { type: 'snapshot', runs: 'x' },
      { type: 'runDelta', header: viewA.header, fromStep: -1, steps: [] },
      { type: 'patchLive', runId: 'a', changes: [{ patchId: 'patch-1', state: 'exploded' }] },
      { type: 'eval', code: 'alert(1)' },
      { type: 'reply', requestId: 'w1', ok: false },
      null,
      42,
    ];
    for (const message of bad) assert.equal(dispatchHostMessage(message, h.deps), false);
    assert.equal(h.errors.length, bad.length);
    assert.match(h.errors[0]!, /rejected host message: malformed message at runs/);
    assert.equal(JSON.stringify(h.model.list()), before);
    assert.deepEqual(h.events, ['snapshot']);
  });

  it('matches replies to requests and checks their results', async () => {
    const h = harness();
    const accepted = h.rpc.request('accept', { runId: 'a', patchId: 'p' });
    const badResult = h.rpc.request('resume', { runId: 'a' });
    const failed = h.rpc.request('cancel', { runId: 'a' });
    const [r1, r2, r3] = h.posted.map((m) => m.requestId);
    assert.ok(r1 && r2 && r3 && new Set([r1, r2, r3]).size === 3);
    dispatchHostMessage({ type: 'reply', requestId: r1, ok: true, result: { message: 'Patch accepted.' } }, h.deps);
    dispatchHostMessage({ type: 'reply', requestId: r2, ok: true, result: { nope: 1 } }, h.deps);
    dispatchHostMessage({ type: 'reply', requestId: r3, ok: false, error: 'not running' }, h.deps);
    dispatchHostMessage({ type: 'reply', requestId: 'w999', ok: true, result: {} }, h.deps);
    assert.deepEqual(await accepted, { message: 'Patch accepted.' });
    await assert.rejects(badResult, /resume: malformed message/);
    await assert.rejects(failed, /not running/);
    assert.match(h.errors[0]!, /unknown request w999/);
    assert.equal(h.rpc.waiting, 0);
  });

  it("follows the window's selected run the host sends (none: null); a malformed one changes nothing", () => {
    const h = harness();
    assert.ok(dispatchHostMessage({ type: 'selected', runId: 'a' }, h.deps));
    assert.ok(dispatchHostMessage({ type: 'selected', runId: null }, h.deps));
    assert.equal(dispatchHostMessage({ type: 'selected', runId: '' }, h.deps), false);
    assert.deepEqual(h.events, ['selected:a', 'selected:null']);
  });

  it('keeps runs newest first and removes them', () => {
    const model = new TimelineModel();
    const older = buildRunView(sampleRun(1, { runId: 'old' }).state, new Map(), false);
    const newer = { ...viewA, header: { ...viewA.header, createdAt: viewA.header.createdAt + 1000 } };
    model.replaceAll([older, newer]);
    assert.deepEqual(
      model.list().map((r) => r.header.runId),
      ['a', 'old'],
    );
    assert.ok(model.remove('old'));
    assert.equal(model.remove('old'), false);
  });

  it("adds the opening's listed runs after its snapshot (a refresh marked listed), in their place; a malformed list changes nothing", () => {
    const h = harness();
    const older = buildRunView(sampleRun(1, { runId: 'old' }).state, new Map(), false);
    const newer = { ...viewA, header: { ...viewA.header, runId: 'new', createdAt: viewA.header.createdAt + 1000 } };
    dispatchHostMessage({ type: 'snapshot', runs: [viewA] }, h.deps);
    assert.ok(dispatchHostMessage({ type: 'runsListed', runs: [newer, older] }, h.deps));
    assert.deepEqual(
      h.model.list().map((r) => r.header.runId),
      ['new', 'a', 'old'],
    );
    assert.deepEqual(h.events, ['snapshot', 'listed']);
    assert.equal(dispatchHostMessage({ type: 'runsListed', runs: [{ header: {} }] }, h.deps), false);
    assert.equal(h.model.list().length, 3);
  });
});

describe('webview: saved state', () => {
  it('falls back to empty on garbage and keeps a good state', () => {
    assert.deepEqual(loadState(undefined), EMPTY_STATE);
    assert.deepEqual(loadState({ expanded: 'x' }), EMPTY_STATE);
    const good = { expanded: ['k'], scrollTop: 44, selected: 'k', seenRuns: ['a'] };
    assert.deepEqual(loadState(good), good);
  });

  it('expands only the newest run seen for the first time', () => {
    assert.deepEqual(newlySeen(['c', 'b', 'a'], ['a']), { expandRunId: 'c', seen: ['a', 'c', 'b'] });
    assert.deepEqual(newlySeen(['a'], ['a']), { expandRunId: undefined, seen: ['a'] });
  });
});

describe('webview: row content', () => {
  it('gives every ledger status and patch state its own icon', () => {
    const icons = Object.values(LEDGER_LOOK).map((l) => l.icon);
    assert.equal(new Set(icons).size, icons.length);
    const tones = Object.values(LEDGER_LOOK).map((l) => l.tone);
    assert.equal(new Set(tones).size, tones.length, 'and its own colour');
    const patchIcons = Object.values(PATCH_LOOK).map((l) => `${l.icon}/${l.tone}`);
    assert.equal(new Set(patchIcons).size, patchIcons.length);
  });

  it('offers the actions that fit each row', () => {
    const { state, live } = sampleRun(14, { runId: 'a' });
    const view = buildRunView({ ...state, status: 'paused' }, live, false);
    view.header.undoableRestores = 1;
    const expanded = new Set([
      rowKey.run('a'),
      ...view.steps.map((s) => rowKey.step('a', s.stepId)),
      ...view.steps.flatMap((s) => s.calls.map((c) => rowKey.call('a', c.callId))),
    ]);
    const rows = flatten([view], expanded);
    const actions = (key: string) =>
      describeRow(
        rows.find((r) => r.key === key)!,
        0,
      ).actions.map((a) => a.id);
    assert.deepEqual(actions(rowKey.run('a')), ['resume', 'undoRestore'], 'paused, no writer: resume; nothing runs to cancel');
    const runActions = (status: RunStatus, active: boolean) => {
      const v = buildRunView({ ...state, status }, live, active);
      return describeRow(flatten([v], new Set())[0]!, 0).actions.map((a) => a.id);
    };
    for (const ended of ['failed', 'completed', 'cancelled'] as const)
      assert.deepEqual(runActions(ended, false), [], `${ended}: no resume`);
    assert.deepEqual(runActions('running', true), ['cancel'], 'held by a live writer: cancel, never resume');
    assert.deepEqual(runActions('running', false), ['resume'], 'left running with no writer: interrupted');
    assert.deepEqual(actions(rowKey.step('a', 2)), ['restore', 'fork']);
    assert.deepEqual(actions(rowKey.patch('a', 'toolu_1', 'patch-1')), ['openDiff', 'accept', 'rollback']);
    assert.deepEqual(actions(rowKey.patch('a', 'toolu_9', 'patch-9')), ['openDiff'], 'accepted: nothing to accept or roll back');
    assert.deepEqual(actions(rowKey.patch('a', 'toolu_13', 'patch-13')), ['openDiff']);
    const effect = rows.find((r) => r.kind === 'effect' && r.call!.toolName === 'run_command')!;
    assert.equal(describeRow(effect, 0).description, 'not reversible');
    assert.deepEqual(contextOf(rows.find((r) => r.kind === 'patch')!), {
      webviewSection: 'patch',
      runId: 'a',
      preventDefaultContextMenuItems: true,
      patchId: 'patch-1',
      patchState: 'applied',
    });
  });

  it('says a run left running with no writer is interrupted (no spinner), and counts its changes to review', () => {
    const { state, live } = sampleRun(3, { runId: 'a' });
    const row = (active: boolean, reviewCount?: number) => {
      const view = buildRunView({ ...state, status: 'running' }, live, active);
      if (reviewCount !== undefined) view.header.reviewCount = reviewCount;
      return describeRow(flatten([view], new Set())[0]!, 0);
    };
    const orphan = row(false);
    assert.match(orphan.meta ?? '', /^interrupted · /);
    assert.equal(orphan.spin, false);
    assert.match(orphan.title, /Status: interrupted: no window is running it any more/);
    const live_ = row(true, 3);
    assert.match(live_.meta ?? '', /^running · /);
    assert.equal(live_.spin, true);
    assert.deepEqual(live_.badges, ['3 to review']);
    assert.match(live_.title, /3 agent changes to review/);
    assert.deepEqual(row(true, 0).badges, [], 'nothing to review: no badge');
  });

  it('shows a started call as cut off, not spinning, once no window runs its run', () => {
    const { state, live } = sampleRun(2, { runId: 'a' });
    const callRow = (active: boolean) => {
      const view = buildRunView({ ...state, status: 'running' }, live, active);
      const step = view.steps.find((s) => s.calls.length > 0)!;
      const started = { ...step.calls[0]!, status: 'started' as const };
      const steps = view.steps.map((s) => (s === step ? { ...s, calls: [started, ...s.calls.slice(1)] } : s));
      const rows = flatten([{ ...view, steps }], new Set([rowKey.run('a'), rowKey.step('a', step.stepId)]));
      return {
        step: describeRow(
          rows.find((r) => r.key === rowKey.step('a', step.stepId))!,
          0,
        ),
        call: describeRow(
          rows.find((r) => r.key === rowKey.call('a', started.callId))!,
          0,
        ),
      };
    };
    const running = callRow(true);
    assert.equal(running.call.spin, true);
    assert.equal(running.step.spin, true);
    const cut = callRow(false);
    assert.equal(cut.call.spin, false);
    assert.equal(cut.step.spin, false);
    assert.equal(cut.call.icon, 'debug-disconnect');
    assert.match(cut.call.description, /cut off: checked when the run resumes/);
  });

  it('shows a damaged run read-only: no resume, restore, accept or roll back; the damage in its badge and title', () => {
    const { state, live } = sampleRun(14, { runId: 'a' });
    const damage = { file: '/s/runs/a/journal.jsonl', offset: 4242, message: 'a complete line does not match its checksum' };
    const view = buildRunView({ ...state, status: 'paused', damage }, live, false);
    view.header.undoableRestores = 1;
    const expanded = new Set([
      rowKey.run('a'),
      ...view.steps.map((s) => rowKey.step('a', s.stepId)),
      ...view.steps.flatMap((s) => s.calls.map((c) => rowKey.call('a', c.callId))),
    ]);
    const rows = flatten([view], expanded);
    const run = describeRow(rows[0]!, 0);
    assert.deepEqual(run.actions, []);
    assert.deepEqual(run.badges, ['damaged']);
    assert.match(run.meta ?? '', /^paused · /);
    assert.match(run.title, /Damaged: \/s\/runs\/a\/journal\.jsonl at byte 4242: .*read-only/s);
    const offered = new Set(rows.flatMap((r) => describeRow(r, 0).actions.map((a) => a.id)));
    assert.deepEqual([...offered], ['openDiff'], 'only reading actions');
  });

  it('hides restore while the run is being written', () => {
    const { state, live } = sampleRun(3, { runId: 'a', running: true });
    const rows = flatten([buildRunView(state, live, true)], new Set([rowKey.run('a')]));
    assert.deepEqual(describeRow(rows[1]!, 0).actions, []);
  });
});
