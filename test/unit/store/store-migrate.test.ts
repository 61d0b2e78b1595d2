import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileStore } from '../../../src/host/node/store-factory';
import { migrateRunsFrom, workspaceStorageSiblings } from '../../../src/host/node/store-migrate';
import { ledgerEntry, runInput } from './fixtures';

describe('runs written where the store used to be', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'store-migrate-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("finds the window's workspace storage and its -N siblings, not other workspaces'", async () => {
    const ws = join(root, 'workspaceStorage');
    for (const name of ['abc', 'abc-1', 'abc-2', 'abcd', 'abc-x', 'other']) mkdirSync(join(ws, name), { recursive: true });
    const found = await workspaceStorageSiblings(openFileStore(root).fs, join(ws, 'abc-1', 'ext.id'));
    assert.deepEqual(found, [join(ws, 'abc-1', 'ext.id'), join(ws, 'abc', 'ext.id'), join(ws, 'abc-2', 'ext.id')]);
  });

  it('moves every run nobody holds into the one store with its blobs, and leaves a held run where it is', async () => {
    const oldRoot = join(root, 'workspaceStorage', 'abc-1', 'ext.id');
    const old = openFileStore(oldRoot);
    const blob = await old.putBlob(new TextEncoder().encode('tool result'));
    const done = await old.createRun(runInput('done'));
    await done.append([ledgerEntry('c1', 1, 'succeeded', blob), { type: 'run_end', status: 'completed' }]);
    await done.close();
    const held = await old.createRun(runInput('held'));
    const into = openFileStore(join(root, 'global', 'workspaces', 'k'));
    const result = await migrateRunsFrom(oldRoot, into);
    assert.deepEqual(result.moved, ['done']);
    assert.deepEqual(result.left, [{ runId: 'held', from: oldRoot, reason: 'another live writer holds it there' }]);
    const state = await into.readRun('done');
    assert.equal(state.ended?.status, 'completed');
    assert.deepEqual(await into.getBlob(blob), new TextEncoder().encode('tool result'));
    assert.ok((await into.verify('done')).ok);
    assert.deepEqual(readdirSync(join(oldRoot, 'runs')), ['held']);
    assert.ok(existsSync(join(oldRoot, 'blobs')), 'the old blobs stay');
    await held.close();
    assert.deepEqual((await migrateRunsFrom(oldRoot, into)).moved, ['held'], 'moved once its writer is gone');
    assert.deepEqual((await migrateRunsFrom(oldRoot, into)).moved, [], 'nothing twice');
  });
});
