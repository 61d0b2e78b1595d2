import * as assert from 'node:assert/strict';
import {
  commandArg,
  HunkRefArg,
  PatchPickArg,
  PatchRefArg,
  RestoreArg,
  ResumeArg,
  RunArg,
  RunRefArg,
} from '../../src/host/vscode/commands/command-args';
import { COMMAND_TABLE } from '../../src/host/vscode/commands/command-table';

describe('command arguments: parsed where they enter', () => {
  it('reads a well-formed argument, and none as none', () => {
    assert.deepEqual(commandArg(RunArg, { task: 'fix the build' }, 'Agent: Run'), { task: 'fix the build' });
    assert.equal(commandArg(RunArg, undefined, 'Agent: Run'), undefined);
    assert.deepEqual(commandArg(ResumeArg, { runId: 'r1', options: { raise: { maxTurns: 80 } } }, 'Agent: Resume'), {
      runId: 'r1',
      options: { raise: { maxTurns: 80 } },
    });
    assert.deepEqual(commandArg(RestoreArg, { runId: 'r1', checkpointId: 'c3', what: 'files' }, 'x'), {
      runId: 'r1',
      checkpointId: 'c3',
      what: 'files',
    });
  });

  it('refuses a malformed one with words naming the field, so nothing runs', () => {
    const cases: [unknown, string][] = [
      [commandArg(RestoreArg, { runId: 'r1', what: 'everything' }, 'Agent: Restore Checkpoint'), 'what'],
      [commandArg(PatchPickArg, { runId: 7 }, 'Agent: Roll Back Patch'), 'runId'],
      [commandArg(ResumeArg, { runId: 'r1', options: { raise: { maxTurns: -5 } } }, 'Agent: Resume'), 'options.raise.maxTurns'],
      [commandArg(RunArg, 'a task as a bare string', 'Agent: Run'), 'argument'],
      [commandArg(ResumeArg, { runId: '' }, 'Agent: Resume'), 'runId'],
    ];
    for (const [result, field] of cases) {
      assert.ok(result instanceof Error, `refused: ${String(result)}`);
      assert.match(result.message, /the command's argument is not valid/);
      assert.ok(result.message.includes(`(${field}:`), result.message);
      assert.match(result.message, /nothing was done$/);
    }
  });

  it('a lenient argument reads a malformed one as none, so the command acts on what the editor shows', () => {
    assert.equal(commandArg(RunRefArg, 'r1', 'x'), 'r1');
    assert.equal(commandArg(RunRefArg, { runId: 'r1' }, 'x'), 'r1');
    assert.deepEqual(commandArg(HunkRefArg, { runId: 'r1', patchId: 'p1', hunk: 0 }, 'x'), { runId: 'r1', patchId: 'p1', hunk: 0 });
    assert.deepEqual(commandArg(PatchRefArg, { runId: 'r1', patchId: 'p1', section: 'patch' }, 'x'), {
      runId: 'r1',
      patchId: 'p1',
      section: 'patch',
    });
    for (const bad of ['', { runId: 7 }, 42]) assert.equal(commandArg(RunRefArg, bad, 'x'), undefined);
    for (const bad of ['r1', { runId: 'r1', patchId: 'p1', hunk: -1 }, { runId: 'r1' }]) {
      assert.equal(commandArg(HunkRefArg, bad, 'x'), undefined);
      if (typeof bad === 'string') assert.equal(commandArg(PatchRefArg, bad, 'x'), undefined);
    }
  });

  it('the rows of the command table carry the schemas their commands are parsed with', () => {
    const argOf = (id: keyof typeof COMMAND_TABLE) => (COMMAND_TABLE[id] as { arg?: unknown }).arg;
    assert.equal(argOf('agentCheckpoints.run'), RunArg);
    assert.equal(argOf('agentCheckpoints.resume'), ResumeArg);
    assert.equal(argOf('agentCheckpoints.restoreCheckpoint'), RestoreArg);
    assert.equal(argOf('agentCheckpoints.review.keepRun'), RunRefArg);
    assert.equal(argOf('agentCheckpoints.acceptPatch'), PatchRefArg);
    assert.equal(argOf('agentCheckpoints.review.undoHunk'), HunkRefArg);
    assert.equal(argOf('agentCheckpoints.cancel'), undefined, 'a command that takes no argument names no schema');
  });
});
