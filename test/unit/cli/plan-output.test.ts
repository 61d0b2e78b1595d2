import { strict as assert } from 'node:assert';
import type { LedgerEntry } from '../../../src/core/ledger/schema';
import type { MessageParam } from '../../../src/core/model/messages';
import type { RuntimeEvent } from '../../../src/core/runtime/types';
import type { StoredRecord } from '../../../src/core/store/records';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { CliEvent, createRunOutput, type OutputMode } from '../../../src/host/cli/output';

// The CLI prints the model's plan each time an update_plan call changes it: text mode as lines
// under the call, --json as a `plan` event.

const PLAN = {
  steps: [
    { step: 'Read the parser', status: 'done' },
    { step: 'Fix it', status: 'in_progress' },
  ],
};

function planCall(id: string, input: unknown): RuntimeEvent {
  const message: MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id, name: 'update_plan', input }] };
  const record = { type: 'message', index: 1, stepId: 1, message, v: 3, at: 1, seq: 2 } as StoredRecord;
  return { type: 'records', runId: 'r1', records: [record] };
}

function finished(callId: string, status: LedgerEntry['status'] = 'succeeded'): RuntimeEvent {
  const entry = { callId, stepId: 1, toolName: 'update_plan', inputHash: 'h', status, idempotency: 'idempotent', replayPolicy: 'auto' };
  return { type: 'ledger', runId: 'r1', entry: { ...entry, sideEffects: [], plannedAt: 1, compensation: 'none' } as LedgerEntry };
}

function printed(mode: OutputMode, events: readonly RuntimeEvent[]): string {
  let out = '';
  const output = createRunOutput(mode, { out: (t) => void (out += t), err: () => undefined }, createToolRegistry());
  for (const event of events) output.event(event);
  return out;
}

describe('the CLI prints the plan', () => {
  it('text: under the call that set it, once per change', () => {
    const out = printed('text', [
      planCall('p1', PLAN),
      finished('p1'),
      planCall('p2', PLAN),
      finished('p2'),
      planCall('p3', { steps: [] }),
      finished('p3'),
    ]);
    assert.equal(
      out,
      [
        '  [ok] plan: 1 of 2 done; now: Fix it',
        '  plan (1 of 2 done; now: Fix it):',
        '    [x] Read the parser',
        '    [>] Fix it',
        '  [ok] plan: 1 of 2 done; now: Fix it',
        '  [ok] clear the plan',
        '  plan cleared',
        '',
      ].join('\n'),
    );
  });

  it('a call that failed or whose input is not a plan prints no plan', () => {
    const out = printed('text', [planCall('p1', PLAN), finished('p1', 'failed'), planCall('p2', { steps: 'all' }), finished('p2')]);
    assert.doesNotMatch(out, /^ {2}plan/m);
  });

  it('--json: a plan event after the call, checked by the CliEvent schema', () => {
    const lines = printed('json', [planCall('p1', PLAN), finished('p1')])
      .trim()
      .split('\n');
    const events = lines.map((line) => CliEvent.parse(JSON.parse(line)));
    assert.deepEqual(
      events.map((e) => e.type),
      ['call', 'plan'],
    );
    assert.deepEqual(events[1], { type: 'plan', runId: 'r1', steps: PLAN.steps });
  });
});
