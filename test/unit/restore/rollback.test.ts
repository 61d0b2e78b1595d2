import { strict as assert } from 'node:assert';
import { hashContent } from '../../../src/core/patches/hash';
import { applyPreparedWrite, prepareWrite } from '../../../src/core/patches/record';
import type { Patch } from '../../../src/core/patches/schema';
import { rollbackFiles, type RunPatches } from '../../../src/core/restore/rollback';
import type { RestoreDeps } from '../../../src/core/restore/types';
import { undoFileRestore, undoSummary } from '../../../src/core/restore/undo';
import type { CheckpointRecord } from '../../../src/core/store/records';
import { MemoryBlobs, MemoryJournal, MemoryLog, MemoryWorkspace, fixedClock, newId, text, utf8 } from '../patches/fakes';

function setup() {
  const workspace = new MemoryWorkspace();
  const blobs = new MemoryBlobs();
  const journal = new MemoryJournal();
  const deps: RestoreDeps = { workspace, blobs, journal, clock: fixedClock, log: new MemoryLog(), newId };
  const patches: Patch[] = [];
  const agentWrite = async (path: string, content: string | null) => {
    const write = await prepareWrite(workspace, path, content === null ? null : utf8(content));
    const patch = await applyPreparedWrite(deps, { runId: 'r', stepId: patches.length, toolCallId: `c${patches.length}` }, write);
    patches.push(patch);
    return patch;
  };
  const run = (checkpoints: CheckpointRecord[] = []): RunPatches => ({ patches, allCheckpoints: checkpoints });
  return { workspace, blobs, journal, deps, patches, agentWrite, run };
}

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix}${i}\n`).join('');

describe('restore/rollback_files', () => {
  it('applied: writes the before content back; undo brings back the exact bytes', async () => {
    const { workspace, journal, deps, agentWrite, run } = setup();
    workspace.userSave('a.txt', utf8('one\ntwo\n'));
    const patch = await agentWrite('a.txt', 'one\nTWO\n');
    const result = await rollbackFiles(deps, run(), { kind: 'patch', patchId: patch.patchId });
    assert.equal(text(workspace.live('a.txt')), 'one\ntwo\n');
    assert.deepEqual(result.written, ['a.txt']);
    const restoreIndex = journal.records.findIndex((r) => r.type === 'restore');
    const stateIndex = journal.records.findIndex((r) => r.type === 'patch_state' && r.state === 'rolled_back');
    assert.ok(restoreIndex >= 0 && stateIndex > restoreIndex);
    await undoFileRestore(deps, result.restore!);
    assert.equal(text(workspace.live('a.txt')), 'one\nTWO\n');
    assert.ok(journal.records.some((r) => r.type === 'restore' && r.kind === 'undo' && r.undoes === result.restore!.restoreId));
    assert.ok(journal.records.some((r) => r.type === 'patch_state' && r.state === 'pending'));
  });

  it('reverses hunks around a user edit and keeps it', async () => {
    const { workspace, deps, agentWrite, run } = setup();
    workspace.userSave('b.txt', utf8(lines(30)));
    const patch = await agentWrite('b.txt', lines(30).replace('line3\n', 'AGENT\n'));
    workspace.userType('b.txt', utf8(lines(30).replace('line3\n', 'AGENT\n').replace('line20\n', 'USER\n')));
    await rollbackFiles(deps, run(), { kind: 'patch', patchId: patch.patchId });
    assert.equal(text(workspace.live('b.txt')), lines(30).replace('line20\n', 'USER\n'));
  });

  it('a conflicting hunk leaves the file alone; force overwrites and undo restores the user edit', async () => {
    const { workspace, deps, agentWrite, run } = setup();
    workspace.userSave('c.txt', utf8(lines(10)));
    const patch = await agentWrite('c.txt', lines(10).replace('line5\n', 'AGENT\n'));
    const edited = lines(10).replace('line5\n', 'AGENT USER\n');
    workspace.userType('c.txt', utf8(edited));
    const dry = await rollbackFiles(deps, run(), { kind: 'patch', patchId: patch.patchId }, { dryRun: true });
    assert.equal(dry.plan.files[0]!.status, 'conflict');
    assert.deepEqual(dry.plan.files[0]!.patches[0]!.hunks, ['conflict']);
    const plain = await rollbackFiles(deps, run(), { kind: 'patch', patchId: patch.patchId });
    assert.equal(plain.written.length, 0);
    assert.equal(text(workspace.live('c.txt')), edited);
    const forced = await rollbackFiles(deps, run(), { kind: 'patch', patchId: patch.patchId }, { force: true });
    assert.equal(text(workspace.live('c.txt')), lines(10));
    await undoFileRestore(deps, forced.restore!);
    assert.equal(text(workspace.live('c.txt')), edited);
  });

  it('dry run touches nothing and records nothing', async () => {
    const { workspace, journal, deps, agentWrite, run } = setup();
    const patch = await agentWrite('d.txt', 'new\n');
    const writes = workspace.writes;
    const result = await rollbackFiles(deps, run(), { kind: 'patch', patchId: patch.patchId }, { dryRun: true });
    assert.equal(result.plan.files[0]!.status, 'revert');
    assert.equal(workspace.writes, writes);
    assert.equal(journal.records.length, 0);
  });

  it('create -> delete on rollback; delete -> recreated; missing modify is a conflict', async () => {
    const { workspace, deps, agentWrite, run } = setup();
    const created = await agentWrite('n.txt', 'x\n');
    await rollbackFiles(deps, run(), { kind: 'patch', patchId: created.patchId });
    assert.equal(workspace.live('n.txt'), null);
    workspace.userSave('gone.txt', utf8('keep me\n'));
    const deleted = await agentWrite('gone.txt', null);
    await rollbackFiles(deps, run(), { kind: 'patch', patchId: deleted.patchId });
    assert.equal(text(workspace.live('gone.txt')), 'keep me\n');
    workspace.userSave('m.txt', utf8('a\n'));
    const modified = await agentWrite('m.txt', 'b\n');
    workspace.files.delete('m.txt');
    const result = await rollbackFiles(deps, run(), { kind: 'patch', patchId: modified.patchId });
    assert.equal(result.plan.files[0]!.status, 'conflict');
    assert.equal(workspace.live('m.txt'), null);
  });

  it('checkpoint: rolls back only later patches, newest first, chaining on one file', async () => {
    const { workspace, deps, agentWrite, run } = setup();
    workspace.userSave('e.txt', utf8(lines(20)));
    await agentWrite('e.txt', lines(20).replace('line1\n', 'A1\n'));
    const afterFirst = text(workspace.live('e.txt'))!;
    await agentWrite('e.txt', afterFirst.replace('line10\n', 'A2\n'));
    await agentWrite('f.txt', 'fresh\n');
    const live = text(workspace.live('e.txt'))!.replace('line18\n', 'USER\n');
    workspace.userType('e.txt', utf8(live));
    const checkpoint = { checkpointId: 'cp1', patchCount: 1 } as CheckpointRecord;
    const result = await rollbackFiles(deps, run([checkpoint]), { kind: 'checkpoint', checkpointId: 'cp1' });
    assert.equal(text(workspace.live('e.txt')), afterFirst.replace('line18\n', 'USER\n'));
    assert.equal(workspace.live('f.txt'), null);
    assert.equal(result.plan.files.length, 2);
  });

  it('one hunk: only that hunk is undone; the patch stays pending', async () => {
    const { workspace, journal, deps, agentWrite, run } = setup();
    workspace.userSave('h.txt', utf8(lines(40)));
    const after = lines(40).replace('line2\n', 'H0\n').replace('line30\n', 'H1\n');
    const patch = await agentWrite('h.txt', after);
    const result = await rollbackFiles(deps, run(), { kind: 'hunk', patchId: patch.patchId, hunkIndex: 1 });
    assert.deepEqual(result.plan.files[0]!.patches[0]!.hunks, ['skip', 'revert']);
    assert.equal(text(workspace.live('h.txt')), lines(40).replace('line2\n', 'H0\n'));
    assert.ok(!journal.records.some((r) => r.type === 'patch_state'));
  });

  it('undo leaves a file alone when the user changed it after the restore', async () => {
    const { workspace, deps, agentWrite, run } = setup();
    workspace.userSave('u.txt', utf8('a\n'));
    const patch = await agentWrite('u.txt', 'b\n');
    const result = await rollbackFiles(deps, run(), { kind: 'patch', patchId: patch.patchId });
    workspace.userType('u.txt', utf8('typed after\n'));
    const undo = await undoFileRestore(deps, result.restore!);
    assert.equal(undo.conflicts.length, 1);
    assert.equal(text(workspace.live('u.txt')), 'typed after\n');
    assert.equal(hashContent(workspace.live('u.txt')!), hashContent(utf8('typed after\n')));
    assert.equal(undoSummary(undo), 'nothing to undo: u.txt changed since the restore (left as it is)', 'says what it did, no id');
  });

  it("the undo's words: what came back, what was left and why, never an id; nothing to undo says so", () => {
    const left = { path: 'b.txt', error: 'changed since the restore; left as it is' };
    assert.equal(undoSummary({ written: ['a.txt'], conflicts: [] }), 'brought back a.txt');
    assert.equal(
      undoSummary({ written: ['a.txt'], conflicts: [left] }),
      'brought back a.txt; left as it is (changed since the restore): b.txt',
    );
    assert.equal(undoSummary({ written: [], conflicts: [] }), 'nothing to undo: the files are already as they were before the restore');
    assert.equal(undoSummary(undefined), 'nothing to undo in this run');
  });
});
