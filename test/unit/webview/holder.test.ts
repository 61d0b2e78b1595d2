import { strict as assert } from 'node:assert';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { HostToWebview, parseMessage, RequestMessage } from '../../../src/protocol/messages';
import { describeRow } from '../../../src/webview/rowContent';
import { flatten, rowKey } from '../../../src/webview/tree';
import { sampleRun } from './fixtures';

describe('timeline: a run held by another window', () => {
  const { state, live } = sampleRun(4, { runId: 'a', running: true });
  const progressAt = buildRunView(state, live, true).header.updatedAt;
  const holder = { pid: 4242, hostname: 'devbox', heartbeatAt: progressAt + 110_000 };

  it('shows who holds it and when it last made progress, and offers Take over instead of Cancel', () => {
    const view = buildRunView(state, live, true, holder);
    const row = describeRow(flatten([view], new Set())[0]!, progressAt + 125_000);
    assert.match(row.meta ?? '', /^last progress 2 min ago · pid 4242 · running · /);
    assert.deepEqual(row.badges, ['other window']);
    assert.deepEqual(
      row.actions.map((a) => a.id),
      ['takeOver'],
    );
    assert.match(row.title, /Held by another window: pid 4242 on devbox, last heartbeat 15 s ago/);
  });

  it('a run this window writes shows no holder and keeps Cancel', () => {
    const row = describeRow(flatten([buildRunView(state, live, true)], new Set([rowKey.run('a')]))[0]!, progressAt);
    assert.deepEqual(
      row.actions.map((a) => a.id),
      ['cancel'],
    );
    assert.doesNotMatch(row.meta ?? '', /another window/);
  });

  it('the holder crosses the boundary under its schema; a bad one is refused, and takeOver is a request', () => {
    const snapshot = { type: 'snapshot', runs: [buildRunView(state, live, true, holder)] };
    assert.ok(parseMessage(HostToWebview, snapshot).ok);
    const bad = {
      type: 'snapshot',
      runs: [{ ...snapshot.runs[0]!, header: { ...snapshot.runs[0]!.header, heldElsewhere: { pid: 'x' } } }],
    };
    assert.match((parseMessage(HostToWebview, bad) as { error: string }).error, /heldElsewhere/);
    assert.ok(parseMessage(RequestMessage, { type: 'request', requestId: 'r1', method: 'takeOver', params: { runId: 'a' } }).ok);
    assert.ok(!parseMessage(RequestMessage, { type: 'request', requestId: 'r1', method: 'takeOver', params: {} }).ok);
  });
});
