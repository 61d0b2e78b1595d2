import { strict as assert } from 'node:assert';
import { HostToWebview, METHODS, ReplyMessage, RequestMessage, WebviewToHost, parseMessage } from '../../../src/protocol/messages';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import { sortRestoreFiles } from '../../../src/protocol/viewModel';
import { sampleRun } from '../webview/fixtures';

const PARAMS: Record<string, unknown> = {
  restorePreview: { runId: 'r', checkpointId: 'c', mode: 'files' },
  restore: { runId: 'r', checkpointId: 'c', mode: 'both', previewId: 'p' },
  openDiff: { runId: 'r', patchId: 'p' },
  openProblem: { path: 'src/a.ts', line: 3 },
  accept: { runId: 'r', patchId: 'p' },
  rollbackPatch: { runId: 'r', patchId: 'p', hunk: 2 },
  undoLastRestore: { runId: 'r' },
  fork: { runId: 'r', step: 2 },
  compare: { runId: 'r', otherRunId: 'p' },
  undoEffects: { runId: 'r', callIds: ['c1', 'c2'] },
  allowHosts: { hosts: ['example.com'] },
  select: { runId: 'r' },
  resume: { runId: 'r' },
  takeOver: { runId: 'r' },
  cancel: { runId: 'r' },
  failureAction: { runId: 'r', action: 'set_key' },
  openLink: { url: 'https://example.com' },
  copyText: { text: 'x' },
  decide: { runId: 'r', callId: 'c', decision: 'deny', reason: 'not this file' },
  pickContext: { kind: 'selection' },
  startRun: { task: 'fix the test', context: [{ kind: 'selection', path: 'src/a.ts', startLine: 1, endLine: 3 }] },
  continueRun: { runId: 'r', instruction: 'now add a README line' },
  setApiKey: {},
};

describe('protocol messages', () => {
  it('accepts a well-formed request for every method', () => {
    assert.deepEqual(METHODS.sort(), Object.keys(PARAMS).sort());
    for (const method of METHODS) {
      const parsed = WebviewToHost.safeParse({ type: 'request', requestId: 'w1', method, params: PARAMS[method] });
      assert.ok(parsed.success, `${method}: ${parsed.success ? '' : parsed.error.message}`);
    }
    assert.ok(WebviewToHost.safeParse({ type: 'ready' }).success);
  });

  it('rejects requests without an id, with an unknown method, or with wrong params', () => {
    const bad = [
      { type: 'request', method: 'accept', params: PARAMS.accept },
      { type: 'request', requestId: '', method: 'accept', params: PARAMS.accept },
      { type: 'request', requestId: 'w1', method: 'deleteEverything', params: {} },
      { type: 'request', requestId: 'w1', method: 'restore', params: { runId: 'r', checkpointId: 'c', mode: 'files' } },
      { type: 'request', requestId: 'w1', method: 'restorePreview', params: { runId: 'r', checkpointId: 'c', mode: 'everything' } },
      { type: 'request', requestId: 'w1', method: 'rollbackPatch', params: { runId: 'r', patchId: 'p', hunk: -1 } },
      { type: 'request', requestId: 'x'.repeat(101), method: 'cancel', params: { runId: 'r' } },
      null,
      'ready',
      { type: 'snapshot', runs: [] },
    ];
    for (const message of bad) assert.equal(WebviewToHost.safeParse(message).success, false, JSON.stringify(message));
  });

  it('replies carry a result when ok and an error otherwise', () => {
    assert.ok(ReplyMessage.safeParse({ type: 'reply', requestId: 'w1', ok: true, result: { message: 'x' } }).success);
    assert.ok(ReplyMessage.safeParse({ type: 'reply', requestId: 'w1', ok: false, error: 'no' }).success);
    assert.equal(ReplyMessage.safeParse({ type: 'reply', requestId: 'w1', ok: false }).success, false);
    assert.equal(ReplyMessage.safeParse({ type: 'reply', requestId: 'w1', ok: true, error: 'both' }).success, false);
  });

  it('a built snapshot parses, and a damaged one does not', () => {
    const { state, live } = sampleRun(30);
    const snapshot = { type: 'snapshot', runs: [buildRunView(state, live, false)] };
    assert.ok(HostToWebview.safeParse(snapshot).success);
    const damaged = structuredClone(snapshot);
    (damaged.runs[0]!.steps[3]!.calls[0] as { status: string }).status = 'done';
    const result = parseMessage(HostToWebview, damaged);
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.error, /malformed message at runs\.0\.steps\.3\.calls\.0\.status/);
  });

  it('a request message type checks against its params', () => {
    const message: RequestMessage = { type: 'request', requestId: 'w2', method: 'resume', params: { runId: 'r' } };
    assert.ok(RequestMessage.safeParse(message).success);
  });

  it('sorts restore files conflicts first, then reverts, then the rest', () => {
    const sorted = sortRestoreFiles([
      { path: 'b', action: 'skip' },
      { path: 'z', action: 'revert' },
      { path: 'y', action: 'conflict' },
      { path: 'a', action: 'already' },
      { path: 'a', action: 'conflict' },
    ]);
    assert.deepEqual(
      sorted.map((f) => `${f.action}:${f.path}`),
      ['conflict:a', 'conflict:y', 'revert:z', 'already:a', 'skip:b'],
    );
  });
});

describe('protocol messages: the conversation', () => {
  const request = (method: string, params: unknown) => WebviewToHost.safeParse({ type: 'request', requestId: 'w1', method, params });

  it('refuses an empty task or instruction, an unknown decision and an overlong reason', () => {
    assert.equal(request('startRun', { task: '   ', context: [] }).success, false);
    assert.equal(request('continueRun', { runId: 'r', instruction: '' }).success, false);
    assert.equal(request('decide', { runId: 'r', callId: 'c', decision: 'allow_always' }).success, false);
    assert.equal(request('decide', { runId: 'r', callId: 'c', decision: 'deny', reason: 'x'.repeat(2001) }).success, false);
    assert.equal(request('pickContext', { kind: 'clipboard' }).success, false);
  });

  it('carries streamed text and the waiting calls to the webview', () => {
    const stream = parseMessage(HostToWebview, { type: 'stream', runId: 'r', stepId: 2, text: 'Hel', at: 1 });
    assert.ok(stream.ok);
    const approvals = parseMessage(HostToWebview, {
      type: 'approvals',
      pending: [{ runId: 'r', callId: 'c', toolName: 'run_command', summary: 'run: node test.js', input: '{}' }],
    });
    assert.ok(approvals.ok);
    assert.equal(parseMessage(HostToWebview, { type: 'stream', runId: 'r', stepId: -1, text: '', at: 1 }).ok, false);
  });
});
