import { strict as assert } from 'node:assert';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { CallRow } from '../../../src/protocol/viewModel';
import { defaultAction, describeRow } from '../../../src/webview/rowContent';
import { flatten, rowKey } from '../../../src/webview/tree';
import { sampleRun } from './fixtures';

// The problems the editor reported after a call's writes, as the Timeline shows them: rows under
// the call (after its patches), and a count on the call; read from the ledger entry, so a reload
// shows the same.

function runWithProblems(more: number): ReturnType<typeof buildRunView> {
  const sample = sampleRun(2, { runId: 'a' });
  const ledger = sample.state.ledger.map((entry) =>
    entry.callId === 'toolu_1'
      ? {
          ...entry,
          diagnostics: {
            items: [
              {
                path: 'src/a.ts',
                line: 3,
                severity: 'error' as const,
                message: "Type 'number' is not assignable to type 'string'.",
                source: 'ts',
                code: '2322',
              },
              {
                path: 'src/a.ts',
                line: 7,
                severity: 'warning' as const,
                message: "'x' is declared but never used.",
                unchecked: true as const,
              },
            ],
            more,
          },
        }
      : entry,
  );
  return buildRunView({ ...sample.state, ledger }, sample.live, false);
}

describe('webview: the problems after a call', () => {
  it('are rows under the call after its patches, each with its severity, message and place', () => {
    const run = runWithProblems(1);
    const call = run.steps.flatMap((s) => s.calls).find((c) => c.callId === 'toolu_1')!;
    assert.ok(CallRow.safeParse(call).success, 'the row passes the wire schema');
    assert.equal(call.moreProblems, 1);
    const rows = flatten([run], new Set([rowKey.run('a'), rowKey.step('a', 1), rowKey.call('a', 'toolu_1')]));
    const under = rows.filter((r) => r.level === 4);
    assert.deepEqual(
      under.map((r) => `${r.kind} ${r.posinset}/${r.setsize}`),
      [
        ...call.patches.map((_, i) => `patch ${i + 1}/${call.patches.length + 2}`),
        `problem ${call.patches.length + 1}/${call.patches.length + 2}`,
        `problem ${call.patches.length + 2}/${call.patches.length + 2}`,
      ],
    );
    const [error, warning] = under.filter((r) => r.kind === 'problem').map((r) => describeRow(r, 0));
    assert.deepEqual(
      [error!.icon, error!.tone, error!.label, error!.description, error!.meta],
      ['error', 'error', 'a.ts:3', 'error (ts 2322)', "Type 'number' is not assignable to type 'string'."],
    );
    assert.match(error!.title, /src\/a\.ts:3 \(ts 2322\)/);
    assert.equal(error!.spoken, "Error in src/a.ts, line 3: Type 'number' is not assignable to type 'string'.");
    assert.deepEqual(
      under.map((r) => defaultAction(r)),
      [...call.patches.map((p) => (p.binary ? undefined : 'openDiff')), 'openProblem', 'openProblem'],
      'Enter on a problem opens its file at its line',
    );
    assert.deepEqual([warning!.icon, warning!.tone, warning!.label], ['warning', 'warning', 'a.ts:7']);
    assert.equal(warning!.description, 'warning · may be older', 'one found in a file not checked before the edit says so');
    assert.match(warning!.spoken!, /found after the edit; the file had not been checked before it/);
    assert.doesNotMatch(error!.spoken!, /checked before/);
    const callRow = rows.find((r) => r.key === rowKey.call('a', 'toolu_1'))!;
    assert.ok(describeRow(callRow, 0).badges.includes('3 problems'), 'the count includes those past the cap');
    assert.ok(callRow.expandable);
  });

  it('a call whose files no language service looked at says so in its tooltip, with no problem rows', () => {
    const sample = sampleRun(2, { runId: 'a' });
    const ledger = sample.state.ledger.map((entry) =>
      entry.callId === 'toolu_1' ? { ...entry, diagnostics: { items: [], more: 0, notChecked: ['src/b.ts'] } } : entry,
    );
    const run = buildRunView({ ...sample.state, ledger }, sample.live, false);
    const call = run.steps.flatMap((s) => s.calls).find((c) => c.callId === 'toolu_1')!;
    assert.ok(CallRow.safeParse(call).success, 'the row passes the wire schema');
    const rows = flatten([run], new Set([rowKey.run('a'), rowKey.step('a', 1), rowKey.call('a', 'toolu_1')]));
    assert.ok(rows.every((r) => r.kind !== 'problem'));
    const callRow = rows.find((r) => r.key === rowKey.call('a', 'toolu_1'))!;
    assert.match(describeRow(callRow, 0).title, /No language service looked at src\/b\.ts: problems not known/);
  });

  it('a call without problems (or an older record) has no such rows', () => {
    const run = buildRunView(sampleRun(2, { runId: 'a' }).state, new Map(), false);
    const call = run.steps.flatMap((s) => s.calls).find((c) => c.callId === 'toolu_1')!;
    assert.equal(call.problems, undefined);
    const rows = flatten([run], new Set([rowKey.run('a'), rowKey.step('a', 1), rowKey.call('a', 'toolu_1')]));
    assert.ok(rows.every((r) => r.kind !== 'problem'));
  });
});
