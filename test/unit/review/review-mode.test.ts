import { strict as assert } from 'node:assert';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeText, decodeText, hashContent } from '../../../src/core/patches/hash';
import { applyPreparedWrite, prepareWrite } from '../../../src/core/patches/record';
import { fullyKept, hunkRef, reviewFile, type HunkView } from '../../../src/core/patches/review';
import { loadRunReview } from '../../../src/core/patches/review-load';
import type { Patch } from '../../../src/core/patches/schema';
import { modeUndo, undoHunksInline } from '../../../src/core/restore/inline-undo';
import type { RestoreDeps } from '../../../src/core/restore/types';
import { undoFileRestore } from '../../../src/core/restore/undo';
import type { RunWriter } from '../../../src/core/store/contract';
import type { RestoreRecord } from '../../../src/core/store/records';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { openFileStore } from '../../../src/host/node/store-factory';
import { MemoryLog, fixedClock, newId, utf8 } from '../patches/fakes';
import { runInput } from '../store/fixtures';

// A command's chmod is a patch whose two sides hold the same bytes: the review shows it as one
// change of the whole file ("made executable"), Keep accepts it, Undo sets the bit back through
// the inline undo's restore, and refuses when the live file no longer has the agent's bit or bytes.

const SCRIPT = '#!/bin/sh\necho hi\n';

describe('review: a change of the executable bit', function () {
  let base = '';
  let store: ReturnType<typeof openFileStore>;
  let writer: RunWriter;
  let deps: RestoreDeps;
  let ws: NodeWorkspace;

  before(function () {
    if (process.platform === 'win32') this.skip(); // no file modes there
  });
  beforeEach(async () => {
    base = mkdtempSync(join(tmpdir(), 'ac-review-mode-'));
    mkdirSync(join(base, 'ws'));
    ws = new NodeWorkspace({ roots: [join(base, 'ws')], ripgrep: null });
    writeFileSync(join(base, 'ws', 'run.sh'), SCRIPT, { mode: 0o644 });
    store = openFileStore(join(base, 'store'));
    writer = await store.createRun(runInput('run-m'));
    deps = { workspace: ws, blobs: store, journal: writer, clock: fixedClock, log: new MemoryLog(), newId };
  });
  afterEach(async () => {
    await writer.close();
    rmSync(base, { recursive: true, force: true });
  });

  const file = (path: string) => join(base, 'ws', path);
  const isExec = (path: string): boolean => (statSync(file(path)).mode & 0o111) !== 0;

  /** The command's change as the sandbox hands it over: `bytes` with the bit `executable`. */
  async function command(path: string, bytes: string, executable: boolean, stepId = 1): Promise<Patch> {
    const patch = await applyPreparedWrite(
      deps,
      { runId: 'run-m', stepId, toolCallId: `c${stepId}` },
      await prepareWrite(ws, path, utf8(bytes), executable),
    );
    await writer.append([{ type: 'patch', patch }]);
    return patch;
  }

  async function views(path = 'run.sh'): Promise<HunkView[]> {
    const review = await loadRunReview(store, 'run-m');
    return reviewFile(
      readFileSync(file(path), 'utf8'),
      review.pending.filter((p) => p.patch.path === path),
    );
  }

  /** The Undo the editor makes of these views (no text hunk among them: the text stays as it is). */
  async function undo(chosen: readonly HunkView[]): Promise<boolean> {
    const live = (await ws.read('run.sh'))!;
    const mode = chosen.find((v) => v.hunk.exec !== undefined)?.patch;
    const exec = mode ? modeUndo(mode, live.hash, await ws.executable!('run.sh')) : undefined;
    const result = encodeText(decodeText(live.bytes)!.text, false);
    return undoHunksInline(deps, {
      path: 'run.sh',
      live: live.bytes,
      liveHash: live.hash,
      result,
      resultHash: hashContent(result),
      hunks: chosen.map(hunkRef),
      ...(exec ? { exec } : {}),
    });
  }

  it('chmod +x waits for review as one change of the file, and Keep accepts it: nothing waits after', async () => {
    const patch = await command('run.sh', SCRIPT, true);
    assert.equal(isExec('run.sh'), true);
    const waiting = await views();
    assert.deepEqual(
      waiting.map((v) => [v.hunk.index, v.state, v.line, v.hunk.exec]),
      [[0, 'waiting', 0, true]],
      'one change, at the top of the file',
    );
    const review = await loadRunReview(store, 'run-m');
    assert.deepEqual(fullyKept(review.pending, waiting.map(hunkRef), review.decisions), [patch.patchId]);
    await writer.append([
      { type: 'review', decision: 'keep', hunks: waiting.map(hunkRef) },
      { type: 'patch_state', patchId: patch.patchId, state: 'accepted' },
    ]);
    assert.deepEqual(await views(), []);
    assert.equal(isExec('run.sh'), true, 'Keep leaves the bit');
  });

  it('Undo clears the bit on disk, recorded as a restore whose undo sets it again; the change no longer waits', async () => {
    await command('run.sh', SCRIPT, true);
    assert.equal(await undo(await views()), true);
    assert.equal(isExec('run.sh'), false, 'the live file is no longer executable');
    assert.equal(readFileSync(file('run.sh'), 'utf8'), SCRIPT, 'its bytes untouched');
    assert.deepEqual(await views(), [], 'decided: nothing waits');
    const restore = (await store.readRun('run-m')).restores.at(-1) as RestoreRecord;
    assert.deepEqual([restore.files[0]?.replacedExec, restore.files[0]?.writtenExec], [true, false]);
    await undoFileRestore(deps, restore);
    assert.equal(isExec('run.sh'), true, 'the undo of that Undo makes it executable again');
  });

  it('chmod -x reads as no longer executable, and its Undo makes the file executable again', async () => {
    chmodSync(file('run.sh'), 0o755);
    await command('run.sh', SCRIPT, false);
    const waiting = await views();
    assert.deepEqual(
      waiting.map((v) => v.hunk.exec),
      [false],
    );
    assert.equal(await undo(waiting), true);
    assert.equal(isExec('run.sh'), true);
  });

  it("Undo refuses, touching nothing, when the live file no longer has the agent's bit or bytes", async () => {
    const patch = await command('run.sh', SCRIPT, true);
    chmodSync(file('run.sh'), 0o644);
    const live = (await ws.read('run.sh'))!;
    assert.throws(() => modeUndo(patch, live.hash, false), /run\.sh is not executable now, not as the agent left it; nothing was undone/);
    chmodSync(file('run.sh'), 0o755);
    writeFileSync(file('run.sh'), `${SCRIPT}echo mine\n`);
    const edited = (await ws.read('run.sh'))!;
    assert.throws(() => modeUndo(patch, edited.hash, true), /run\.sh changed since the agent made it executable; nothing was undone/);
    assert.deepEqual([isExec('run.sh'), readFileSync(file('run.sh'), 'utf8')], [true, `${SCRIPT}echo mine\n`]);
    assert.equal((await views()).length, 1, 'the change still waits: Keep is still possible');
  });

  it('a bit the person changes between the check and the write is a conflict: left alone, nothing decided', async () => {
    await command('run.sh', SCRIPT, true);
    const waiting = await views();
    const live = (await ws.read('run.sh'))!;
    const exec = modeUndo(waiting[0]!.patch, live.hash, true);
    chmodSync(file('run.sh'), 0o644);
    const written = await undoHunksInline(deps, {
      path: 'run.sh',
      live: live.bytes,
      liveHash: live.hash,
      result: live.bytes,
      resultHash: live.hash,
      hunks: waiting.map(hunkRef),
      exec,
    });
    assert.equal(written, false);
    assert.equal(isExec('run.sh'), false, "the person's bit stays");
    assert.equal((await views()).length, 1, 'still waiting');
  });

  it('a command that changes lines and the bit: its text hunks, then one change of the bit after them', async () => {
    await command('run.sh', SCRIPT.replace('hi', 'HELLO'), true);
    const waiting = await views();
    assert.deepEqual(
      waiting.map((v) => [v.hunk.index, v.hunk.exec]),
      [
        [1, true],
        [0, undefined],
      ],
      'the bit at the top of the file, after the text hunks in numbering',
    );
    const modeOnly = waiting.filter((v) => v.hunk.exec !== undefined);
    assert.equal(await undo(modeOnly), true);
    assert.deepEqual([isExec('run.sh'), readFileSync(file('run.sh'), 'utf8')], [false, SCRIPT.replace('hi', 'HELLO')], 'the lines stay');
    assert.deepEqual(
      (await views()).map((v) => v.hunk.index),
      [0],
      'the text hunk still waits',
    );
  });
});
