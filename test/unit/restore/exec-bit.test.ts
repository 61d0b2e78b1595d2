import { strict as assert } from 'node:assert';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashContent } from '../../../src/core/patches/hash';
import { applyPreparedWrite, prepareWrite } from '../../../src/core/patches/record';
import { Patch } from '../../../src/core/patches/schema';
import type { CommandChanges } from '../../../src/core/ports';
import { rollbackFiles } from '../../../src/core/restore/rollback';
import { undoFileRestore } from '../../../src/core/restore/undo';
import { RestoreRecord } from '../../../src/core/store/records';
import { applyCommandChanges } from '../../../src/core/tools/command-changes';
import type { PreparedWrite, ToolContext } from '../../../src/core/tools/types';
import { NodeWorkspace } from '../../../src/host/node/node-workspace';
import { PlatformFs } from '../../../src/host/node/platform-fs';
import { MemoryBlobs, MemoryJournal, MemoryLog, fixedClock, newId, utf8 } from '../patches/fakes';

// The executable bit, the one file mode a patch holds: a command's chmod becomes a mode-only
// patch, and Restore, rollback and the undo of a restore bring the bit back, never over the
// person's own change of it.

const SCRIPT = '#!/bin/sh\necho hi\n';

describe('patches hold the executable bit', function () {
  let base = '';
  let ws: NodeWorkspace;
  let blobs: MemoryBlobs;
  let journal: MemoryJournal;
  let patches: Patch[];

  before(function () {
    if (process.platform === 'win32') this.skip(); // no file modes there: the workspace leaves the bit out (tested below)
  });
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'ac-exec-'));
    ws = new NodeWorkspace({ roots: [base], ripgrep: null });
    blobs = new MemoryBlobs();
    journal = new MemoryJournal();
    patches = [];
    writeFileSync(join(base, 'tool.sh'), SCRIPT, { mode: 0o644 });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const isExec = (path: string): boolean => (statSync(join(base, path)).mode & 0o111) !== 0;
  const deps = () => ({ workspace: ws, blobs, journal, clock: fixedClock, log: new MemoryLog(), newId });
  const context = (stepId: number): ToolContext =>
    ({
      workspace: ws,
      async applyWrite(write: PreparedWrite): Promise<Patch> {
        const patch = await applyPreparedWrite(deps(), { runId: 'r', stepId, toolCallId: `call-${stepId}` }, write);
        patches.push(patch);
        return patch;
      },
    }) as unknown as ToolContext;

  /** A command's change set as the sandbox hands it over: one file, its bytes and executable bit. */
  function changeOf(path: string, bytes: string | null, executable?: boolean, beforeHash = hashContent(utf8(SCRIPT))): CommandChanges {
    return {
      via: 'view',
      files: [
        {
          path: join(base, path),
          kind: bytes === null ? 'delete' : 'write',
          beforeHash,
          binary: false,
          ...(executable === undefined ? {} : { executable }),
          content: async () => utf8(bytes ?? ''),
        },
      ],
      refused: [],
      notes: [],
      discard: async () => undefined,
    };
  }

  it("a command's chmod +x is a mode-only patch; Restore to before it clears the bit and the undo of that restore sets it again", async () => {
    const said = await applyCommandChanges(context(1), changeOf('tool.sh', SCRIPT, true));
    assert.match(said ?? '', /M tool\.sh \(made executable\)/);
    assert.doesNotMatch(said ?? '', /does not bring it back/);
    assert.equal(isExec('tool.sh'), true);
    assert.equal(patches.length, 1);
    const [patch] = patches;
    assert.equal(patch!.beforeHash, patch!.afterHash, 'the bytes are the same on both sides');
    assert.deepEqual([patch!.op, patch!.execBefore, patch!.execAfter], ['modify', false, true]);

    const restored = await rollbackFiles(deps(), { patches, allCheckpoints: [] }, { kind: 'run' });
    assert.deepEqual(restored.written, ['tool.sh']);
    assert.equal(isExec('tool.sh'), false, 'Restore brought the bit back');
    assert.equal(readFileSync(join(base, 'tool.sh'), 'utf8'), SCRIPT);
    assert.deepEqual([restored.restore!.files[0]!.replacedExec, restored.restore!.files[0]!.writtenExec], [true, false]);

    const undone = await undoFileRestore(deps(), restored.restore!);
    assert.deepEqual(undone.written, ['tool.sh']);
    assert.equal(isExec('tool.sh'), true, 'the undo of the restore set the bit again');
  });

  it('a bit the person changed since is never overwritten: the rollback finds it as before, the undo of a restore names a conflict', async () => {
    await applyCommandChanges(context(1), changeOf('tool.sh', SCRIPT, true));
    chmodSync(join(base, 'tool.sh'), 0o644); // the person took it back themselves
    const restored = await rollbackFiles(deps(), { patches, allCheckpoints: [] }, { kind: 'run' });
    assert.equal(restored.restore, undefined, 'nothing to write');
    assert.equal(restored.plan.files[0]!.status, 'already');
    assert.equal(isExec('tool.sh'), false);

    chmodSync(join(base, 'tool.sh'), 0o755);
    const again = await rollbackFiles(deps(), { patches, allCheckpoints: [] }, { kind: 'run' });
    assert.equal(isExec('tool.sh'), false);
    chmodSync(join(base, 'tool.sh'), 0o700); // the person makes it executable again after the restore
    const undone = await undoFileRestore(deps(), again.restore!);
    assert.deepEqual(undone.written, []);
    assert.match(undone.conflicts[0]?.error ?? '', /executable bit changed since the restore/);
    assert.equal(statSync(join(base, 'tool.sh')).mode & 0o777, 0o700, "the person's mode is left as it is");
  });

  it('Restore to each step of a chain (a chmod, then an edit) gives that step its bytes and its bit', async () => {
    await applyCommandChanges(context(1), changeOf('tool.sh', SCRIPT, true));
    const edited = `${SCRIPT}echo more\n`;
    await context(2).applyWrite(await prepareWrite(ws, 'tool.sh', utf8(edited)));
    assert.equal(isExec('tool.sh'), true, 'an edit keeps the bit');
    assert.equal(patches[1]!.execAfter, undefined, 'an edit holds no bit');

    await rollbackFiles(deps(), { patches: patches.filter((p) => p.stepId > 1), allCheckpoints: [] }, { kind: 'run' });
    assert.deepEqual([readFileSync(join(base, 'tool.sh'), 'utf8'), isExec('tool.sh')], [SCRIPT, true], 'step 1: the chmod stays');
    await rollbackFiles(deps(), { patches: [patches[0]!], allCheckpoints: [] }, { kind: 'run' });
    assert.deepEqual([readFileSync(join(base, 'tool.sh'), 'utf8'), isExec('tool.sh')], [SCRIPT, false], 'step 0');
  });

  it('a file a command made executable, and an executable file it removed, come back with their bit', async () => {
    const made = await applyCommandChanges(context(1), changeOf('gen.sh', 'echo gen\n', true, 'absent'));
    assert.match(made ?? '', /A gen\.sh \(executable\)/);
    assert.equal(isExec('gen.sh'), true);
    chmodSync(join(base, 'tool.sh'), 0o755);
    await applyCommandChanges(context(2), changeOf('tool.sh', null));
    assert.equal(patches[1]!.execBefore, true, 'the delete holds the bit the file had');

    const restored = await rollbackFiles(deps(), { patches, allCheckpoints: [] }, { kind: 'run' });
    assert.equal(existsSync(join(base, 'gen.sh')), false);
    assert.deepEqual([readFileSync(join(base, 'tool.sh'), 'utf8'), isExec('tool.sh')], [SCRIPT, true]);
    await undoFileRestore(deps(), restored.restore!);
    assert.equal(isExec('gen.sh'), true, 'made again by the undo, executable');
    assert.equal(existsSync(join(base, 'tool.sh')), false);
  });

  it('a command that leaves the bit as the workspace has it makes no patch', async () => {
    chmodSync(join(base, 'tool.sh'), 0o755);
    const said = await applyCommandChanges(context(1), changeOf('tool.sh', SCRIPT, true));
    assert.match(said ?? '', /= tool\.sh \(already so/);
    assert.deepEqual(patches, []);
  });

  it('+x sets the bit where the file is readable and -x clears every x, the other bits kept; a bit changed meanwhile is stale', async () => {
    chmodSync(join(base, 'tool.sh'), 0o640);
    await ws.setExecutable!('tool.sh', true, false);
    assert.equal(statSync(join(base, 'tool.sh')).mode & 0o7777, 0o750);
    await assert.rejects(ws.setExecutable!('tool.sh', true, false), /expected mode -x, found mode \+x/);
    await ws.setExecutable!('tool.sh', false);
    assert.equal(statSync(join(base, 'tool.sh')).mode & 0o7777, 0o640);
    assert.equal(await ws.executable!('gone.sh'), null);
  });

  it('a workspace without file modes (Windows) records no bit and sets none', async () => {
    const windows = new NodeWorkspace({ roots: [base], ripgrep: null, platformFs: new PlatformFs({ platform: 'win32' }) });
    assert.equal(windows.executable, undefined);
    assert.equal(windows.setExecutable, undefined);
    const write = await prepareWrite(windows, 'tool.sh', utf8(SCRIPT), true);
    assert.deepEqual([write.execBefore, write.execAfter], [undefined, undefined]);
  });
});

describe('records from before the executable bit', () => {
  it('a patch and a restore record without the bit fields still parse, the fields absent', () => {
    const hash = 'a'.repeat(64);
    const patch = Patch.parse({
      ...{ patchId: 'p1', runId: 'r', stepId: 1, toolCallId: 'c', path: 'a.txt', op: 'modify', beforeHash: hash, afterHash: hash },
      ...{ added: 0, removed: 0, binary: false, createdAt: 1, state: 'pending' },
    });
    assert.equal(patch.execBefore, undefined);
    const restore = RestoreRecord.parse({
      ...{ v: 1, at: 1, type: 'restore', restoreId: 'x', kind: 'rollback_files', patchIds: ['p1'] },
      files: [{ path: 'a.txt', replacedHash: hash, writtenHash: 'absent' }],
    });
    assert.equal(restore.files[0]!.writtenExec, undefined);
  });
});
