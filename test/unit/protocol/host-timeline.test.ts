import { strict as assert } from 'node:assert';
import { StoreError, type RunState } from '../../../src/core/store/contract';
import type { RestoreFile } from '../../../src/protocol/viewModel';
import type { RestorePlan, TimelineBackend } from '../../../src/host/vscode/timeline/backend';
import { contentSecurityPolicy, timelineHtml } from '../../../src/host/vscode/timeline/html';
import { RequestHandler } from '../../../src/host/vscode/timeline/requests';
import { ChangeQueue, FIRST_STEPS, TimelineSync } from '../../../src/host/vscode/timeline/sync';
import { RunFolds } from '../../../src/host/vscode/timeline/run-folds';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { applyRunDelta, parseMessage, WebviewToHost } from '../../../src/protocol/messages';
import type { Patch } from '../../../src/core/patches/schema';
import { recordsBetween, sampleRun } from '../webview/fixtures';
import { checkpoint, compactedRun, ledgerEntry } from '../store/fixtures';
import { stampRecords } from '../../../src/core/store/stamp';
import { foldRecords } from '../../../src/core/store/history';
import { fakeConversation } from './fake-conversation';

describe('timeline host: html', () => {
  const html = timelineHtml({
    nonce: 'abcDEF0123456789+/==',
    cspSource: 'https://x.vscode-cdn.net',
    scriptUri: 'https://x/dist/webview.js',
    styleUris: ['https://x/media/timeline.css'],
  });

  it('has the strict CSP with the nonce', () => {
    assert.ok(html.includes(`content="${contentSecurityPolicy('abcDEF0123456789+/==', 'https://x.vscode-cdn.net')}"`));
    assert.match(html, /default-src 'none'; script-src 'nonce-abcDEF0123456789\+\/=='; style-src https:\/\/x\.vscode-cdn\.net; font-src/);
  });

  it('has no inline script or style', () => {
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.match(scripts[0]![1]!, /nonce="abcDEF0123456789\+\/==" src="https:\/\/x\/dist\/webview\.js"/);
    assert.equal(scripts[0]![2]!.trim(), '');
    assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
  });

  it('refuses a weak nonce', () => {
    assert.throws(() => timelineHtml({ nonce: 'short', cspSource: 'x', scriptUri: 'y', styleUris: [] }), /nonce/);
  });
});

function fakeBackend(state: RunState, plans: RestorePlan[]): TimelineBackend & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    onDidChange: () => ({ dispose() {} }),
    onDidSelect: () => ({ dispose() {} }),
    selectedRun: () => undefined,
    select: (runId) => void calls.push(`select ${runId}`),
    listRuns: async () => [
      { runId: state.run.runId, task: state.run.task, createdAt: 0, status: state.status, updatedAt: 0, steps: 1, leased: false },
    ],
    readRun: async () => state,
    liveStates: async () => new Map(),
    readBlob: async () => new Uint8Array(),
    fileUri: () => undefined,
    restoreCheckpoint: async (_r, c, mode, { dryRun }) => {
      calls.push(`${dryRun ? 'dry' : 'real'}:${c}:${mode}`);
      return plans.shift() ?? { files: [] };
    },
    accept: async () => void calls.push('accept'),
    rollbackPatch: async () => ({ revertedHunks: 2, conflictHunks: 1 }),
    undoLastRestore: async () => ({ files: [] }),
    fork: async () => 'fork-1',
    resume: async () => (calls.push('resume'), 'Run resumed.'),
    takeOver: async () => (calls.push('takeOver'), calls.includes('confirm')),
    cancel: async () => {
      throw new Error('the run is not running');
    },
    failureAction: async (_r, action) => (calls.push(`failure:${action}`), 'done'),
  };
}

describe('timeline host: requests', () => {
  const { state } = sampleRun(12);
  const files: RestoreFile[] = [
    { path: 'a.ts', action: 'revert' },
    { path: 'b.ts', action: 'conflict', detail: 'edited' },
  ];
  let ids = 0;
  const handler = (backend: TimelineBackend) =>
    new RequestHandler({
      backend,
      conversation: fakeConversation(),
      state: async () => state,
      openDiff: async () => {},
      newId: () => `id${++ids}`,
    });

  it('previews conflicts first with the effects a restore leaves, then restores that preview', async () => {
    const backend = fakeBackend(state, [{ files }, { files }, { files }]);
    const h = handler(backend);
    const reply = await h.handle({
      type: 'request',
      requestId: 'w1',
      method: 'restorePreview',
      params: { runId: 'run-1', checkpointId: 'cp-1', mode: 'files' },
    });
    assert.ok(reply.ok);
    const preview = reply.result as { previewId: string; files: RestoreFile[]; externalEffects: Array<{ toolName: string }> };
    assert.deepEqual(
      preview.files.map((f) => f.action),
      ['conflict', 'revert'],
    );
    assert.deepEqual([...new Set(preview.externalEffects.map((e) => e.toolName))].sort(), ['http_post', 'run_command']);
    const done = await h.handle({
      type: 'request',
      requestId: 'w2',
      method: 'restore',
      params: { runId: 'run-1', checkpointId: 'cp-1', mode: 'files', previewId: preview.previewId },
    });
    assert.ok(done.ok, done.error);
    assert.deepEqual(backend.calls, ['dry:cp-1:files', 'dry:cp-1:files', 'real:cp-1:files']);
    const again = await h.handle({
      type: 'request',
      requestId: 'w3',
      method: 'restore',
      params: { runId: 'run-1', checkpointId: 'cp-1', mode: 'files', previewId: preview.previewId },
    });
    assert.equal(again.ok, false, 'a preview is good for one restore');
  });

  it('refuses a restore that was not previewed, or whose files changed since', async () => {
    const backend = fakeBackend(state, [{ files }, { files: [{ path: 'a.ts', action: 'conflict' }, files[1]!] }]);
    const h = handler(backend);
    const unseen = await h.handle({
      type: 'request',
      requestId: 'w1',
      method: 'restore',
      params: { runId: 'run-1', checkpointId: 'cp-1', mode: 'files', previewId: 'made-up' },
    });
    assert.equal(unseen.ok, false);
    const preview = await h.preview('run-1', 'cp-1', 'both');
    const otherMode = await h.handle({
      type: 'request',
      requestId: 'w2',
      method: 'restore',
      params: { runId: 'run-1', checkpointId: 'cp-1', mode: 'files', previewId: preview.previewId },
    });
    assert.equal(otherMode.ok, false);
    const h2 = handler(fakeBackend(state, [{ files }, { files: [{ path: 'a.ts', action: 'conflict' }, files[1]!] }]));
    const p2 = await h2.preview('run-1', 'cp-1', 'files');
    const changed = await h2.handle({
      type: 'request',
      requestId: 'w3',
      method: 'restore',
      params: { runId: 'run-1', checkpointId: 'cp-1', mode: 'files', previewId: p2.previewId },
    });
    assert.equal(changed.ok, false);
    assert.match(changed.error ?? '', /changed since the preview/);
    assert.ok(!backend.calls.some((c) => c.startsWith('real')));
  });

  it('answers errors as ok:false with the message', async () => {
    const reply = await handler(fakeBackend(state, [])).handle({
      type: 'request',
      requestId: 'w9',
      method: 'cancel',
      params: { runId: 'run-1' },
    });
    assert.deepEqual(reply, { type: 'reply', requestId: 'w9', ok: false, error: 'the run is not running' });
    const rollback = await handler(fakeBackend(state, [])).handle({
      type: 'request',
      requestId: 'w10',
      method: 'rollbackPatch',
      params: { runId: 'run-1', patchId: 'patch-1' },
    });
    assert.ok(rollback.ok);
    assert.match((rollback.result as { message: string }).message, /2 hunks; 1 hunk in conflict/);
  });

  it("a pick of a run's row selects it for the window; a request without a run id is refused", async () => {
    const backend = fakeBackend(state, []);
    const reply = await handler(backend).handle({ type: 'request', requestId: 's1', method: 'select', params: { runId: 'run-1' } });
    assert.deepEqual(reply, { type: 'reply', requestId: 's1', ok: true, result: { message: '' } });
    assert.deepEqual(backend.calls, ['select run-1']);
    const parsed = parseMessage(WebviewToHost, { type: 'request', requestId: 's2', method: 'select', params: { runId: '' } });
    assert.equal(parsed.ok, false);
  });

  it('a problem row opens its file at its line through the conversation; a bad line or path is refused', async () => {
    const conversation = fakeConversation();
    const h = new RequestHandler({
      backend: fakeBackend(state, []),
      conversation,
      state: async () => state,
      openDiff: async () => {},
      newId: () => 'x',
    });
    const open = (path: string, line: number) => ({ type: 'request', requestId: 'p1', method: 'openProblem', params: { path, line } });
    const parsed = parseMessage(WebviewToHost, open('src/a.ts', 5));
    assert.ok(parsed.ok && parsed.value.type === 'request');
    assert.deepEqual(await h.handle(parsed.value), { type: 'reply', requestId: 'p1', ok: true, result: { message: 'Opened src/a.ts:5.' } });
    assert.deepEqual(conversation.calls, ['problem:src/a.ts:5']);
    assert.equal(parseMessage(WebviewToHost, open('src/a.ts', 0)).ok, false, 'lines count from 1');
    assert.equal(parseMessage(WebviewToHost, open('', 1)).ok, false, 'a path is needed');
    const outside = parseMessage(WebviewToHost, open('../secret.ts', 1));
    assert.ok(outside.ok && outside.value.type === 'request');
    const refused = await h.handle(outside.value);
    assert.equal(refused.ok, false);
    assert.match(refused.error ?? '', /outside every workspace folder/);
    assert.deepEqual(conversation.calls, ['problem:src/a.ts:5'], 'nothing opened');
  });

  it('takeOver says whether the person took the run over', async () => {
    const backend = fakeBackend(state, []);
    const ask = () => handler(backend).handle({ type: 'request', requestId: 't1', method: 'takeOver', params: { runId: 'run-1' } });
    assert.deepEqual(await ask(), { type: 'reply', requestId: 't1', ok: true, result: { message: 'Not taken over.' } });
    backend.calls.push('confirm');
    assert.deepEqual(await ask(), {
      type: 'reply',
      requestId: 't1',
      ok: true,
      result: { message: 'Run taken over: it continues in this window.' },
    });
  });
});

describe('timeline host: sync', () => {
  it('coalesces changes', () => {
    const queue = new ChangeQueue();
    queue.add({ kind: 'records', runId: 'a' });
    queue.add({ kind: 'records', runId: 'a' });
    queue.add({ kind: 'live', paths: ['x', 'y'] });
    assert.deepEqual(queue.drain(), { runs: false, records: ['a'], paths: ['x', 'y'] });
    assert.ok(queue.empty);
  });

  it('sends a snapshot, then deltas for new records and live changes for typed-in files', async () => {
    let current = sampleRun(10);
    const live = new Map(current.live);
    const backend = { ...fakeBackend(current.state, []), readRun: async () => current.state, liveStates: async () => live };
    const sync = new TimelineSync(backend);
    const [snapshot] = await sync.snapshot();
    assert.equal(snapshot.runs[0]!.steps.length, 11);
    current = sampleRun(11);
    // Written by another process: read again.
    sync.recordsChanged('run-1');
    const [delta] = await sync.apply({ runs: false, records: ['run-1'], paths: [] });
    assert.equal(delta?.type, 'runDelta');
    // Step 10 was the last step; its calls kept their status, so only step 11 is new.
    assert.equal(delta?.type === 'runDelta' ? delta.fromStep : -1, 11);
    live.set('patch-1', 'conflict');
    const messages = await sync.apply({ runs: false, records: [], paths: ['src/module1.ts'] });
    assert.deepEqual(messages, [{ type: 'patchLive', runId: 'run-1', changes: [{ patchId: 'patch-1', state: 'conflict' }] }]);
    assert.deepEqual(await sync.apply({ runs: false, records: [], paths: ['src/module1.ts'] }), [], 'no change, no message');
  });

  it('folds the records the runtime emits into the run without reading it again, and sends only the steps they touched', async () => {
    const before = sampleRun(40);
    const after = sampleRun(42);
    let reads = 0;
    const classified: string[] = [];
    const backend = {
      ...fakeBackend(before.state, []),
      readRun: async () => (reads++, before.state),
      liveStates: async (patches: readonly Patch[]) => {
        classified.push(...patches.map((p) => p.patchId));
        return new Map(patches.map((p) => [p.patchId, after.live.get(p.patchId)!]));
      },
    };
    const sync = new TimelineSync(backend);
    const [view] = (await sync.snapshot())[0].runs;
    classified.length = 0;
    const records = recordsBetween(before.state, after.state);
    sync.recordsChanged('run-1', records.slice(0, 5));
    sync.recordsChanged('run-1', records.slice(5));
    const [delta] = await sync.apply({ runs: false, records: ['run-1'], paths: [] });
    assert.equal(reads, 1, 'read once, when the view opened it');
    assert.ok(delta?.type === 'runDelta');
    assert.equal(delta.fromStep, 41, 'steps 0..40 are what the view has');
    assert.deepEqual(applyRunDelta(view, delta), buildRunView(after.state, after.live, false), 'the same view as a whole read builds');
    assert.ok(
      classified.every((id) => after.state.patches.find((p) => p.patchId === id)!.stepId >= 41),
      'only the new steps were classified',
    );

    sync.recordsChanged('run-1', records.slice(2, 3));
    await sync.apply({ runs: false, records: ['run-1'], paths: [] });
    assert.equal(reads, 2, 'records that do not follow the fold: read again');
  });

  it('two views of the window share one fold per run: read once, each batch folded once, each view sent only what it lacks', async () => {
    const before = sampleRun(40, { runId: 'run-1' });
    const after = sampleRun(44, { runId: 'run-1' });
    let reads = 0;
    const backend = {
      ...fakeBackend(before.state, []),
      readRun: async () => (reads++, before.state),
      liveStates: async (patches: readonly Patch[]) => new Map(patches.map((p) => [p.patchId, after.live.get(p.patchId)!])),
    };
    const folds = new RunFolds(() => backend.readRun());
    const side = new TimelineSync(backend, folds);
    const tab = new TimelineSync(backend, folds);
    const [sideView] = (await side.snapshot())[0].runs;
    const [tabView] = (await tab.snapshot())[0].runs;
    assert.equal(reads, 1, 'the second view reads the fold the first one read');
    const records = recordsBetween(before.state, after.state);
    const [first, rest] = [records.slice(0, 5), records.slice(5)];
    side.recordsChanged('run-1', first);
    tab.recordsChanged('run-1', first);
    const [sideDelta] = await side.apply({ runs: false, records: ['run-1'], paths: [] });
    side.recordsChanged('run-1', rest);
    tab.recordsChanged('run-1', rest);
    const [secondDelta] = await side.apply({ runs: false, records: ['run-1'], paths: [] });
    const [tabDelta] = await tab.apply({ runs: false, records: ['run-1'], paths: [] });
    assert.equal(reads, 1, 'no view read the run again');
    assert.ok(sideDelta?.type === 'runDelta' && secondDelta?.type === 'runDelta' && tabDelta?.type === 'runDelta');
    const whole = buildRunView(after.state, after.live, false);
    assert.deepEqual(applyRunDelta(applyRunDelta(sideView, sideDelta), secondDelta), whole);
    assert.deepEqual(applyRunDelta(tabView, tabDelta), whole, 'the tab, built later, got every step the records touched');
  });

  it("a compaction folded in live keeps each step's words, as a whole read of the run shows them", async () => {
    const records = compactedRun();
    const at = records.findIndex((r) => r.type === 'compaction');
    const before = foldRecords(records.slice(0, at));
    let reads = 0;
    let stored = before;
    const sync = new TimelineSync({ ...fakeBackend(before, []), readRun: async () => (reads++, stored) });
    let view = (await sync.snapshot())[0].runs[0]!;
    const later = stampRecords([checkpoint('c8', 3, 'tool_finished', 2), checkpoint('c9', 4, 'before_model', 2)], records.length + 1, 9);
    for (const group of [records.slice(at), later.slice(0, 1), later.slice(1)]) {
      sync.recordsChanged('r1', group);
      const [delta] = await sync.apply({ runs: false, records: ['r1'], paths: [] });
      assert.ok(delta?.type === 'runDelta');
      view = applyRunDelta(view, delta);
    }
    assert.equal(reads, 1, 'the step that compacted is built again from the history it counts in');
    const whole = buildRunView(foldRecords([...records, ...later]), new Map(), false);
    assert.deepEqual(view.steps, whole.steps);
    assert.equal(whole.steps[1]!.text, 'First I read the README.');

    // A call of step 1, before the compaction, settles (as a resume's reconciliation does): read again.
    const settled = stampRecords([ledgerEntry('call-1', 1, 'succeeded')], records.length + later.length + 1, 10);
    stored = foldRecords([...records, ...later, ...settled]);
    sync.recordsChanged('r1', settled);
    const [again] = await sync.apply({ runs: false, records: ['r1'], paths: [] });
    assert.equal(reads, 2, 'its history was let go: the run is read again');
    assert.ok(again?.type === 'runDelta');
    assert.deepEqual(applyRunDelta(view, again).steps, buildRunView(stored, new Map(), false).steps);
  });

  it('records the runtime appends while the view reads the run are folded in once the read is done', async () => {
    const before = sampleRun(40);
    const after = sampleRun(42);
    let finishRead: (state: RunState) => void = () => undefined;
    let reads = 0;
    const sync = new TimelineSync({
      ...fakeBackend(before.state, []),
      readRun: () => (reads++, new Promise<RunState>((resolve) => (finishRead = resolve))),
    });
    const snapshot = sync.snapshot();
    while (reads === 0) await new Promise((r) => setImmediate(r));
    const appended = recordsBetween(before.state, after.state);
    sync.recordsChanged('run-1', appended);
    finishRead(before.state);
    const [first] = await snapshot;
    assert.deepEqual(first.runs[0], buildRunView(after.state, new Map(), false), 'the snapshot has the steps appended meanwhile');
    assert.deepEqual(await sync.apply({ runs: false, records: ['run-1'], paths: [] }), [], 'and nothing is sent twice');
    const more = sampleRun(43);
    sync.recordsChanged('run-1', recordsBetween(after.state, more.state, appended.at(-1)!.seq));
    const [delta] = await sync.apply({ runs: false, records: ['run-1'], paths: [] });
    assert.ok(delta?.type === 'runDelta');
    assert.deepEqual(applyRunDelta(first.runs[0], delta), buildRunView(more.state, new Map(), false));
    assert.equal(reads, 1, 'read once');
  });

  it('opens with one run read (the selected, else the newest); the others follow newest first, each read and sent once, none built by a change of the listing', async () => {
    const { state } = sampleRun(3);
    const reads: string[] = [];
    const runOf = (runId: string): RunState => ({ ...state, run: { ...state.run, runId } });
    const listed = ['old', 'mid', 'new'].map((runId, i) => ({
      runId,
      task: runId,
      createdAt: i,
      status: 'paused' as const,
      updatedAt: i,
      steps: 3,
      leased: false,
    }));
    const sync = new TimelineSync({
      ...fakeBackend(state, []),
      listRuns: async () => listed,
      readRun: async (runId: string) => (reads.push(runId), runOf(runId)),
    });
    const opening = await sync.opening('mid');
    assert.deepEqual(
      opening.messages[0].runs.map((r) => r.header.runId),
      ['mid'],
    );
    assert.deepEqual(opening.rest, ['new', 'old']);
    assert.deepEqual(await sync.apply({ runs: true, records: [], paths: [] }), [], 'a change of the listing builds none of the rest');
    assert.deepEqual(reads, ['mid']);
    const [changed] = await sync.apply({ runs: false, records: ['new'], paths: [] });
    assert.ok(changed?.type === 'runDelta' && changed.header.runId === 'new', 'a run the runtime writes to is sent at once');
    assert.equal(await sync.listed('new'), undefined, 'and not again');
    assert.deepEqual(await sync.listed('old'), buildRunView(runOf('old'), new Map(), false), 'a listed run is sent whole');
    assert.equal(await sync.listed('old'), undefined, 'once');
    assert.deepEqual(reads, ['mid', 'new', 'old']);
    const again = await sync.opening();
    assert.deepEqual(
      again.messages[0].runs.map((r) => r.header.runId),
      ['new'],
      'no selection: the newest',
    );
  });

  it("sends a long run's first steps in the snapshot and the rest in chunks that add up to the whole run", async () => {
    const long = sampleRun(FIRST_STEPS + 4300);
    const sync = new TimelineSync(fakeBackend(long.state, []));
    const [snapshot, ...rest] = await sync.snapshot();
    assert.equal(snapshot.runs[0]!.steps.length, FIRST_STEPS);
    assert.deepEqual(
      rest.map((d) => [d.fromStep, d.steps.length]),
      [
        [FIRST_STEPS, 2000],
        [FIRST_STEPS + 2000, 2000],
        [FIRST_STEPS + 4000, 301],
      ],
    );
    const whole = rest.reduce((view, delta) => applyRunDelta(view, delta), snapshot.runs[0]!);
    assert.deepEqual(whole, buildRunView(long.state, new Map(), false));
  });

  it("shows each run's changes to review, and sends the run again when that count changes", async () => {
    const { state } = sampleRun(3);
    let waiting = 2;
    const sync = new TimelineSync({ ...fakeBackend(state, []), reviewCount: () => waiting });
    const [snapshot] = await sync.snapshot();
    assert.equal(snapshot.runs[0]!.header.reviewCount, 2);
    assert.deepEqual(await sync.apply({ runs: true, records: [], paths: [] }), [], 'same count: nothing sent');
    waiting = 0;
    const [sent] = await sync.apply({ runs: true, records: [], paths: [] });
    assert.equal(sent?.type, 'runDelta', JSON.stringify(sent));
    assert.equal(sent?.type === 'runDelta' ? sent.header.reviewCount : -1, undefined, 'all kept or undone: no count');
  });

  it('keeps a damaged run in the snapshot, its intact part marked damaged', async () => {
    const { state } = sampleRun(4);
    const damage = { file: '/s/runs/run-1/journal.jsonl', offset: 99, message: 'a complete line does not match its checksum' };
    const base = fakeBackend({ ...state, damage }, []);
    const listed = (await base.listRuns()).map((s) => ({ ...s, damaged: 'journal.jsonl at byte 99' }));
    const sync = new TimelineSync({ ...base, listRuns: async () => listed });
    const [snapshot] = await sync.snapshot();
    assert.equal(snapshot.runs.length, 1);
    assert.equal(snapshot.runs[0]!.header.damaged, `${damage.file} at byte 99: ${damage.message}`);
    assert.equal(snapshot.runs[0]!.steps.length, 5);
  });

  it('leaves out a run whose journal has no readable run record, and shows the others', async () => {
    const { state } = sampleRun(2);
    const base = fakeBackend(state, []);
    const [good] = await base.listRuns();
    const broken = { ...good!, runId: 'broken', damaged: 'journal.jsonl at byte 0' };
    const sync = new TimelineSync({
      ...base,
      listRuns: async () => [good!, broken],
      readRun: async (runId: string) => {
        if (runId === 'broken') throw new StoreError('journal.jsonl is damaged at byte 0', 'damaged', 'journal.jsonl', 0);
        return state;
      },
    });
    const [snapshot] = await sync.snapshot();
    assert.deepEqual(
      snapshot.runs.map((r) => r.header.runId),
      [state.run.runId],
    );
  });
});
