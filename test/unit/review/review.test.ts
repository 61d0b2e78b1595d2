import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { splitLines } from '../../../src/core/patches/hunks';
import { applyPreparedWrite, prepareWrite } from '../../../src/core/patches/record';
import { fullyKept, hunkRef, reviewFile, undoneLines, type HunkView } from '../../../src/core/patches/review';
import { reviewHunksOf } from '../../../src/core/patches/review-hunks';
import { loadRunReview, withRecords } from '../../../src/core/patches/review-load';
import { foldDecision } from '../../../src/core/store/fold';
import { rollbackFiles } from '../../../src/core/restore/rollback';
import type { RestoreDeps } from '../../../src/core/restore/types';
import { undoFileRestore } from '../../../src/core/restore/undo';
import type { RunWriter } from '../../../src/core/store/contract';
import { StoreRecord, type NewRecord } from '../../../src/core/store/records';
import { openFileStore } from '../../../src/host/node/store-factory';
import { MemoryLog, MemoryWorkspace, fixedClock, newId, text, utf8 } from '../patches/fakes';
import { runInput } from '../store/fixtures';

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line${i}\n`).join('');
const BEFORE = lines(40);
const AFTER = BEFORE.replace('line5\n', 'AGENT5\n').replace('line20\n', 'line20\nADDED\n').replace('line33\n', '');

function summary(views: readonly HunkView[]): string[] {
  return views.map((v) => `${v.hunk.index}:${v.state}@${v.line}`);
}

describe('review: hunks of an agent patch', () => {
  it('splits each hunk into its core, added lines and removed blocks', () => {
    const hunks = reviewHunksOf('f', BEFORE, AFTER);
    assert.equal(hunks.length, 3);
    assert.deepEqual(hunks[0]!.newCore, ['AGENT5\n']);
    assert.deepEqual(hunks[0]!.oldCore, ['line5\n']);
    assert.deepEqual(hunks[0]!.added, [0]);
    assert.deepEqual(hunks[0]!.removed, [{ at: 0, lines: ['line5\n'] }]);
    assert.deepEqual(hunks[1]!.newCore, ['ADDED\n']);
    assert.deepEqual(hunks[1]!.removed, []);
    assert.equal(hunks[1]!.newStart, 21);
    assert.deepEqual(hunks[2]!.newCore, []);
    assert.deepEqual(hunks[2]!.removed, [{ at: 0, lines: ['line33\n'] }]);
  });

  it('follows the person typing: shifted hunks stay waiting, a hunk whose lines they changed is edited', () => {
    const pending = [{ patch: fakePatch('p1'), hunks: reviewHunksOf('f', BEFORE, AFTER) }];
    assert.deepEqual(summary(reviewFile(AFTER, pending)), ['0:waiting@5', '1:waiting@21', '2:waiting@34']);
    const typedAbove = `user\nuser\n${AFTER}`;
    assert.deepEqual(summary(reviewFile(typedAbove, pending)), ['0:waiting@7', '1:waiting@23', '2:waiting@36']);
    // A line right next to a hunk (its context) changed: the hunk's own lines are still there.
    const nextTo = AFTER.replace('line4\n', 'user4\n');
    assert.deepEqual(summary(reviewFile(nextTo, pending)), ['0:waiting@5', '1:waiting@21', '2:waiting@34']);
    const inside = AFTER.replace('AGENT5\n', 'AGENT5 and the person\n');
    assert.deepEqual(summary(reviewFile(inside, pending)), ['0:edited@5', '1:waiting@21', '2:waiting@34']);
    const hunk1Only = [{ patch: pending[0]!.patch, hunks: pending[0]!.hunks.slice(1, 2) }];
    const shiftedAndEdited = `user\nuser\n${AFTER.replace('ADDED\n', 'ADDED by me\n')}`;
    assert.deepEqual(summary(reviewFile(shiftedAndEdited, hunk1Only)), ['1:edited@23'], 'an edited hunk is shown where it is');
    // Put back as it was by other means (a restore, the person's own undo): nothing to review.
    assert.deepEqual(summary(reviewFile(AFTER.replace('AGENT5\n', 'line5\n'), pending)), ['1:waiting@21', '2:waiting@34']);
  });

  it('undoing one hunk against the live text keeps the other edits, and all of them give the before text', () => {
    const pending = [{ patch: fakePatch('p1'), hunks: reviewHunksOf('f', BEFORE, AFTER) }];
    const live = `top\n${AFTER}`.replace('line38\n', 'user38\n');
    const views = reviewFile(live, pending);
    const undone = undoneLines(splitLines(live), views[1]!)!.join('');
    assert.equal(undone, `top\n${AFTER}`.replace('ADDED\n', '').replace('line38\n', 'user38\n'));
    let all = splitLines(AFTER);
    for (const view of [...reviewFile(AFTER, pending)].reverse()) all = undoneLines(all, view)!;
    assert.equal(all.join(''), BEFORE);
    const edited = reviewFile(AFTER.replace('AGENT5\n', 'mine\n'), pending);
    assert.equal(undoneLines(splitLines(AFTER), edited[0]!), undefined, 'an edited hunk is never forced');
  });

  it('an older patch covered by a newer one of the same file shows only the newer hunks', () => {
    const second = AFTER.replace('AGENT5\n', 'AGENT5 again\n');
    const pending = [
      { patch: fakePatch('p1'), hunks: reviewHunksOf('f', BEFORE, AFTER) },
      { patch: fakePatch('p2'), hunks: reviewHunksOf('f', AFTER, second) },
    ];
    const views = reviewFile(second, pending);
    assert.deepEqual(
      views.map((v) => `${v.patch.patchId}:${v.hunk.index}:${v.state}`),
      ['p2:0:waiting', 'p1:1:waiting', 'p1:2:waiting'],
    );
  });

  it('review records are checked by the record schema', () => {
    const good = { v: 1, at: 1, type: 'review', decision: 'keep', hunks: [{ patchId: 'p', hunk: 0 }] };
    assert.equal(StoreRecord.parse(good).type, 'review');
    assert.equal(StoreRecord.safeParse({ ...good, hunks: [] }).success, false);
    assert.equal(StoreRecord.safeParse({ ...good, decision: 'maybe' }).success, false);
    assert.equal(StoreRecord.safeParse({ ...good, hunks: [{ patchId: 'p', hunk: -1 }] }).success, false);
    const decisions = new Map();
    for (const record of [good, { ...good, decision: 'undo' }]) foldDecision(decisions, StoreRecord.parse(record) as never);
    assert.equal(decisions.get('p')?.get(0), 'undo', 'the latest decision wins');
  });
});

describe('review: state derived from the journal', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(nodePath.join(tmpdir(), 'review-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function setup() {
    const store = openFileStore(dir);
    const writer: RunWriter = await store.createRun(runInput('run-r'));
    const workspace = new MemoryWorkspace();
    const deps: RestoreDeps = { workspace, blobs: store, journal: writer, clock: fixedClock, log: new MemoryLog(), newId };
    workspace.userSave('a.txt', utf8(BEFORE));
    const write = await prepareWrite(workspace, 'a.txt', utf8(AFTER));
    const patch = await applyPreparedWrite(deps, { runId: 'run-r', stepId: 1, toolCallId: 'c1' }, write);
    await writer.append([{ type: 'patch', patch }]);
    const append = (records: NewRecord[]) => writer.append(records);
    return { store, writer, workspace, deps, patch, append };
  }

  it('after a reload exactly the undecided hunks wait; kept and undone ones do not come back', async () => {
    const { store, writer, workspace, patch, append } = await setup();
    const first = await loadRunReview(store, 'run-r');
    assert.deepEqual(
      first.pending[0]!.hunks.map((h) => h.index),
      [0, 1, 2],
    );
    const views = reviewFile(text((await workspace.read('a.txt'))!.bytes)!, first.pending);
    await append([{ type: 'review', decision: 'keep', hunks: [hunkRef(views[0]!)] }]);
    workspace.userType('a.txt', utf8(undoneLines(splitLines(AFTER), views[1]!)!.join('')));
    await append([{ type: 'review', decision: 'undo', hunks: [hunkRef(views[1]!)] }]);
    await writer.close();

    const reloaded = await loadRunReview(openFileStore(dir), 'run-r');
    assert.equal(reloaded.pending[0]!.patch.patchId, patch.patchId);
    const live = text((await workspace.read('a.txt'))!.bytes)!;
    assert.deepEqual(summary(reviewFile(live, reloaded.pending)), ['2:waiting@33']);
  });

  it('a rollback takes the patch out of review and its undo brings back what still waited', async () => {
    const { store, writer, workspace, deps, patch, append } = await setup();
    await append([{ type: 'review', decision: 'keep', hunks: [{ patchId: patch.patchId, hunk: 0 }] }]);
    const rolled = await rollbackFiles(deps, await store.readRun('run-r'), { kind: 'patch', patchId: patch.patchId });
    assert.equal(text(workspace.live('a.txt')), BEFORE);
    assert.deepEqual((await loadRunReview(store, 'run-r')).pending, []);
    await undoFileRestore(deps, rolled.restore!);
    await writer.close();
    const back = await loadRunReview(openFileStore(dir), 'run-r');
    assert.deepEqual(summary(reviewFile(AFTER, back.pending)), ['1:waiting@21', '2:waiting@34']);
  });

  it('a patch the runtime appends joins the review as a reload would find it, without reading the run', async () => {
    const { store, workspace, deps, append } = await setup();
    const before = await loadRunReview(store, 'run-r');
    await append([{ type: 'review', decision: 'keep', hunks: [{ patchId: before.pending[0]!.patch.patchId, hunk: 0 }] }]);
    const kept = await loadRunReview(store, 'run-r');
    workspace.userSave('b.txt', utf8(BEFORE));
    const write = await prepareWrite(workspace, 'b.txt', utf8(AFTER));
    const second = await applyPreparedWrite(deps, { runId: 'run-r', stepId: 2, toolCallId: 'c2' }, write);
    const records = await append([{ type: 'patch', patch: second }]);
    const blobsOnly = { getBlob: (hash: string) => store.getBlob(hash) };
    const appended = (await withRecords(blobsOnly, 'run-r', kept, records, new Map()))!;
    const reloaded = await loadRunReview(store, 'run-r');
    assert.deepEqual(appended, reloaded);
    assert.deepEqual(
      appended.pending.map((p) => [p.patch.path, p.hunks.map((h) => h.index)]),
      [
        ['a.txt', [1, 2]],
        ['b.txt', [0, 1, 2]],
      ],
    );
    const fromNothing = (await withRecords(blobsOnly, 'run-r', undefined, records, new Map()))!;
    assert.deepEqual(
      fromNothing.pending.map((p) => p.patch.path),
      ['b.txt'],
      'a run with nothing pending before',
    );
  });

  it('a keep, then an accept, folded into the loaded review: what a reload finds, each folded into the one before', async () => {
    const { store, workspace, deps, append } = await setup();
    workspace.userSave('b.txt', utf8(BEFORE));
    const second = await applyPreparedWrite(
      deps,
      { runId: 'run-r', stepId: 2, toolCallId: 'c2' },
      await prepareWrite(workspace, 'b.txt', utf8(AFTER)),
    );
    await append([{ type: 'patch', patch: second }]);
    const loaded = await loadRunReview(store, 'run-r');
    const [first] = loaded.pending;
    const blobsOnly = { getBlob: (hash: string) => store.getBlob(hash) };
    const keep = await append([{ type: 'review', decision: 'keep', hunks: [{ patchId: second.patchId, hunk: 1 }] }]);
    const kept = (await withRecords(blobsOnly, 'run-r', loaded, keep, new Map()))!;
    assert.deepEqual(kept, await loadRunReview(store, 'run-r'));
    const accept = await append([{ type: 'patch_state', patchId: first!.patch.patchId, state: 'accepted' }]);
    const accepted = (await withRecords(blobsOnly, 'run-r', kept, accept, new Map()))!;
    assert.deepEqual(accepted, await loadRunReview(store, 'run-r'));
    assert.deepEqual(
      accepted.pending.map((p) => [p.patch.path, p.hunks.map((h) => h.index)]),
      [['b.txt', [0, 2]]],
    );
  });

  it('a patch accepted whole (per-patch accept) has nothing left to review; fully kept patches are named', async () => {
    const { store, patch, append } = await setup();
    const review = await loadRunReview(store, 'run-r');
    const refs = review.pending[0]!.hunks.map((h) => ({ patchId: patch.patchId, hunk: h.index }));
    assert.deepEqual(fullyKept(review.pending, refs.slice(1), review.decisions), []);
    assert.deepEqual(fullyKept(review.pending, refs, review.decisions), [patch.patchId]);
    await append([{ type: 'patch_state', patchId: patch.patchId, state: 'accepted' }]);
    assert.deepEqual((await loadRunReview(store, 'run-r')).pending, []);
  });
});

function fakePatch(patchId: string) {
  return {
    patchId,
    runId: 'r',
    stepId: 1,
    toolCallId: 'c',
    path: 'f',
    op: 'modify' as const,
    beforeHash: 'absent',
    afterHash: 'absent',
    added: 0,
    removed: 0,
    binary: false,
    createdAt: 0,
    state: 'pending' as const,
  };
}
