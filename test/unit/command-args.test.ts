import * as assert from 'node:assert/strict';
import { commandArg, PatchPickArg, RestoreArg, ResumeArg, RunArg } from '../../src/host/vscode/commands/command-args';

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
});
