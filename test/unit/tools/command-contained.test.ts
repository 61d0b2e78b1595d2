import { strict as assert } from 'node:assert';
import { hasExternalEffect, LedgerEntry } from '../../../src/core/ledger/schema';
import { hashContent } from '../../../src/core/patches/hash';
import type { Patch } from '../../../src/core/patches/schema';
import type { CommandChanges, CommandFileChange, CommandResult } from '../../../src/core/ports';
import { applyChangeSet } from '../../../src/core/tools/command-changes';
import { commandContained } from '../../../src/core/tools/run-command';
import type { PreparedWrite, ToolContext } from '../../../src/core/tools/types';
import { MemoryWorkspace, utf8 } from '../patches/fakes';

// Whether a command's call is "contained" (all it did is held by its patches, so it is no
// external effect): only when the sandbox vouches for its isolation, nothing outlived it, and its
// whole change set was applied as patches. Anything unknown or left over: not contained.

const RESULT: CommandResult = { exitCode: 0, signal: null, stdout: '', stderr: '', timedOut: false, truncated: false, durationMs: 5 };

function contextOver(workspace: MemoryWorkspace): ToolContext {
  return {
    workspace,
    async applyWrite(write: PreparedWrite): Promise<Patch> {
      await workspace.write(write.path, write.after!, write.beforeHash);
      return {} as Patch;
    },
  } as unknown as ToolContext;
}

function rewrite(path: string, before: string, after: string): CommandFileChange {
  return {
    path,
    kind: 'write',
    beforeHash: hashContent(utf8(before)),
    binary: false,
    content: async () => utf8(after),
  };
}

function changeSet(files: CommandFileChange[], extra: Partial<CommandChanges> = {}): CommandChanges {
  return { via: 'view', files, refused: [], notes: [], allInFiles: true, discard: async () => undefined, ...extra };
}

describe('run_command: a contained command', () => {
  let workspace: MemoryWorkspace;
  beforeEach(() => {
    workspace = new MemoryWorkspace();
    workspace.userSave('notes.md', utf8('tabs\n'));
  });

  it('isolated, nothing outlived it, every change applied as a patch: contained', async () => {
    const changes = changeSet([rewrite('notes.md', 'tabs\n', 'spaces\n')]);
    const applied = await applyChangeSet(contextOver(workspace), changes);
    assert.equal(applied.allPatched, true);
    assert.equal(commandContained({ ...RESULT, isolated: true, changes }, applied), true);
    assert.equal(commandContained({ ...RESULT, isolated: true }, undefined), true, 'a command that changed nothing');
  });

  it('not isolated, or something outlived it: not contained', async () => {
    const changes = changeSet([rewrite('notes.md', 'tabs\n', 'spaces\n')]);
    const applied = await applyChangeSet(contextOver(workspace), changes);
    assert.equal(commandContained({ ...RESULT, changes }, applied), false, 'the sandbox did not vouch for it');
    assert.equal(commandContained({ ...RESULT, isolated: true, stillRunning: 'its process group is alive' }, undefined), false);
    assert.equal(commandContained({ ...RESULT, isolated: true, changes }, undefined), false, 'a change set not applied');
  });

  it('a change left unapplied (a conflict with the live file, a refused path) or placed without a patch: not contained', async () => {
    workspace.userType('notes.md', utf8('tabs, unsaved\n'));
    const conflict = await applyChangeSet(contextOver(workspace), changeSet([rewrite('notes.md', 'tabs\n', 'spaces\n')]));
    assert.equal(conflict.allPatched, false, 'the unsaved buffer won: the workspace differs from what the command saw');
    const refused = await applyChangeSet(contextOver(workspace), changeSet([], { refused: [{ path: '.envrc', rule: 'protected' }] }));
    assert.equal(refused.allPatched, false);
    const unpatched = await applyChangeSet(contextOver(workspace), changeSet([], { allInFiles: undefined, notes: ['Ignored paths: ...'] }));
    assert.equal(unpatched.allPatched, false, 'the host did not say every change is in its files');
  });

  it('the ledger: a contained call is no external effect; an older record without the field stays one', () => {
    const old = LedgerEntry.parse({
      callId: 'toolu_1',
      stepId: 1,
      toolName: 'run_command',
      inputHash: 'h',
      status: 'succeeded',
      idempotency: 'non_idempotent',
      replayPolicy: 'ask',
      sideEffects: ["runs a process with the user's permissions; may change anything it can reach"],
      plannedAt: 1,
      startedAt: 2,
      finishedAt: 3,
      compensation: 'not reversible',
    });
    assert.equal(hasExternalEffect(old), true);
    assert.equal(hasExternalEffect({ ...old, contained: true }), false);
    assert.equal(hasExternalEffect({ ...old, contained: false }), true);
  });
});

describe('run_command: a file the system will not let the person write', () => {
  it('is named as not applied, the other files still go, and the call is not contained', async () => {
    const workspace = new MemoryWorkspace();
    workspace.userSave('locked/a.txt', utf8('a\n'));
    workspace.userSave('b.txt', utf8('b\n'));
    const ctx = contextOver(workspace);
    const refusing: ToolContext = {
      ...ctx,
      async applyWrite(write: PreparedWrite): Promise<Patch> {
        if (write.path.startsWith('locked/'))
          throw Object.assign(new Error(`EACCES: permission denied, open '${write.path}.ac-tmp'`), { code: 'EACCES' });
        return ctx.applyWrite(write);
      },
    };
    const applied = await applyChangeSet(refusing, changeSet([rewrite('locked/a.txt', 'a\n', 'A\n'), rewrite('b.txt', 'b\n', 'B\n')]));
    assert.match(applied.text ?? '', /M b\.txt/);
    assert.match(applied.text ?? '', /Not applied \(you cannot write it here[^\n]*\n {2}locked\/a\.txt: EACCES/);
    assert.equal(applied.allPatched, false);
    assert.equal(new TextDecoder().decode((await workspace.read('b.txt'))!.bytes), 'B\n');
    assert.equal(new TextDecoder().decode((await workspace.read('locked/a.txt'))!.bytes), 'a\n');
  });

  it('any other failure (the store, a defect) still stops the call', async () => {
    const workspace = new MemoryWorkspace();
    workspace.userSave('b.txt', utf8('b\n'));
    const failing = {
      ...contextOver(workspace),
      applyWrite: async () => {
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      },
    } as unknown as ToolContext;
    await assert.rejects(applyChangeSet(failing, changeSet([rewrite('b.txt', 'b\n', 'B\n')])), /ENOSPC/);
  });
});
