import { strict as assert } from 'node:assert';
import type { ApprovalRequest, Approver } from '../../../src/core/ports';
import { UNDO_CALL_REASON } from '../../../src/core/runtime/calls';
import { answer, byTurn, harness, reply, SETTINGS, toolUse, type Harness } from '../../unit/runtime/harness';

// An undo call (made under "Ask the agent to undo these") is asked whatever was allowed for the run.

const never = () => new AbortController().signal;

describe('undo calls are asked', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a call made under "undo these" is asked even after "allow for the run"', async () => {
    const asked: ApprovalRequest[] = [];
    const approver: Approver = {
      async approve(request) {
        asked.push(request);
        return request.reason === undefined ? 'allow_for_run' : 'allow_once';
      },
      async askUncertain() {
        return null;
      },
    };
    h = await harness({
      store: 'file',
      script: byTurn([
        reply([toolUse('t1', 'run_command', { command: 'echo made > made.txt' })]),
        answer('made it'),
        reply([toolUse('t2', 'run_command', { command: 'rm -f made.txt' })]),
        answer('removed it'),
      ]),
    });
    const done = await h.runtime({ approver }).start({ task: 'make a file', settings: SETTINGS });
    assert.equal(done.status, 'completed', done.reason);
    const undone = await h.runtime({ approver }).continue(done.runId, 'undo the file', never(), { moreTurns: 5, undo: ['t1'] });
    assert.equal(undone.status, 'completed', undone.reason);
    assert.deepEqual(
      asked.map((a) => [a.callId, a.reason]),
      [
        ['t1', undefined],
        ['t2', UNDO_CALL_REASON],
      ],
    );
  });
});
