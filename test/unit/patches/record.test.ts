import { strict as assert } from 'node:assert';
import { StaleContentError } from '../../../src/core/ports';
import { ABSENT, hashContent } from '../../../src/core/patches/hash';
import { applyPreparedWrite, prepareWrite, type WriteDeps } from '../../../src/core/patches/record';
import { Patch } from '../../../src/core/patches/schema';
import { MemoryBlobs, MemoryLog, MemoryWorkspace, fixedClock, newId, text, utf8 } from './fakes';

function setup(cap?: number) {
  const workspace = new MemoryWorkspace();
  const blobs = new MemoryBlobs();
  const log = new MemoryLog();
  const deps: WriteDeps = { workspace, blobs, log, clock: fixedClock, newId, ...(cap === undefined ? {} : { contentCapBytes: cap }) };
  return { workspace, blobs, log, deps };
}
const origin = { runId: 'r1', stepId: 2, toolCallId: 'toolu_1' };

describe('patches/record', () => {
  it('modify: hashes live content, stores both blobs, writes, returns a valid patch with a diff', async () => {
    const { workspace, blobs, deps } = setup();
    workspace.userSave('a.txt', utf8('one\ntwo\nthree\n'));
    const write = await prepareWrite(workspace, './a.txt', utf8('one\nTWO\nthree\n'));
    assert.equal(write.path, 'a.txt');
    assert.equal(write.beforeHash, hashContent(utf8('one\ntwo\nthree\n')));
    const patch = Patch.parse(await applyPreparedWrite(deps, origin, write));
    assert.equal(patch.op, 'modify');
    assert.equal(patch.added, 1);
    assert.equal(patch.removed, 1);
    assert.equal('diff' in patch, false, 'a patch carries no unified diff (format 2): the blobs hold both sides');
    assert.equal(text(await blobs.getBlob(patch.beforeBlob!)), 'one\ntwo\nthree\n');
    assert.equal(text(await blobs.getBlob(patch.afterBlob!)), 'one\nTWO\nthree\n');
    assert.equal(text(workspace.live('a.txt')), 'one\nTWO\nthree\n');
    assert.equal(patch.state, 'pending');
    assert.equal(patch.toolCallId, 'toolu_1');
  });

  it('create and delete use `absent` on the missing side', async () => {
    const { workspace, deps } = setup();
    const created = await applyPreparedWrite(deps, origin, await prepareWrite(workspace, 'n.txt', utf8('x\n')));
    assert.equal(created.op, 'create');
    assert.equal(created.beforeHash, ABSENT);
    assert.equal(created.beforeBlob, undefined);
    const deleted = await applyPreparedWrite(deps, origin, await prepareWrite(workspace, 'n.txt', null));
    assert.equal(deleted.op, 'delete');
    assert.equal(deleted.afterHash, ABSENT);
    assert.equal(workspace.live('n.txt'), null);
  });

  it('hashes the unsaved buffer, not the disk, and flags the dirty write', async () => {
    const { workspace, deps } = setup();
    workspace.userSave('b.txt', utf8('disk\n'));
    workspace.userType('b.txt', utf8('typed\n'));
    const write = await prepareWrite(workspace, 'b.txt', utf8('agent\n'));
    assert.equal(write.beforeHash, hashContent(utf8('typed\n')));
    const patch = await applyPreparedWrite(deps, origin, write);
    assert.equal(patch.wroteDirtyBuffer, true);
  });

  it('refuses with StaleContentError when live changed after prepare, and the file is kept', async () => {
    const { workspace, deps } = setup();
    workspace.userSave('c.txt', utf8('v1\n'));
    const write = await prepareWrite(workspace, 'c.txt', utf8('agent\n'));
    workspace.userType('c.txt', utf8('user typed\n'));
    await assert.rejects(applyPreparedWrite(deps, origin, write), StaleContentError);
    assert.equal(text(workspace.live('c.txt')), 'user typed\n');
  });

  it('binary content: flag set, no diff', async () => {
    const { workspace, deps } = setup();
    const patch = await applyPreparedWrite(deps, origin, await prepareWrite(workspace, 'img.bin', Uint8Array.of(0, 1, 2)));
    assert.equal(patch.binary, true);
  });

  it('over the size cap: content kept by hash only, with a warning', async () => {
    const { workspace, blobs, log, deps } = setup(10);
    const patch = await applyPreparedWrite(deps, origin, await prepareWrite(workspace, 'big.txt', utf8('0123456789abcdef\n')));
    assert.equal(patch.contentOmitted, true);
    assert.equal(patch.afterBlob, undefined);
    assert.equal(blobs.blobs.size, 0);
    assert.ok(log.lines.some((l) => l.level === 'warn' && l.message.includes('cap')));
    assert.equal(patch.afterHash, hashContent(utf8('0123456789abcdef\n')));
  });

  it('keeps CRLF line endings in the diff lines and the written bytes', async () => {
    const { workspace, deps } = setup();
    workspace.userSave('w.txt', utf8('a\r\nb\r\n'));
    const patch = await applyPreparedWrite(deps, origin, await prepareWrite(workspace, 'w.txt', utf8('a\r\nB\r\n')));
    assert.equal(text(workspace.live('w.txt')), 'a\r\nB\r\n');
    assert.equal(patch.added, 1);
  });
});
