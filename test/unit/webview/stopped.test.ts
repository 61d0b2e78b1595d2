import { strict as assert } from 'node:assert';
import { createRunOutput } from '../../../src/host/cli/output';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { foldRecords } from '../../../src/core/store/history';
import type { NewRecord } from '../../../src/core/store/records';
import { stampRecords } from '../../../src/core/store/stamp';
import { buildRunView } from '../../../src/host/vscode/timeline/view-build';
import type { RunHeader, StepRow } from '../../../src/protocol/viewModel';
import { visibleSteps } from '../../../src/webview/conversation';
import { callLook, describeRow, stepHeadline, stoppedText } from '../../../src/webview/rowContent';
import { flatten, rowKey } from '../../../src/webview/tree';
import { checkpoint, message, runInput } from '../store/fixtures';
import { sampleRun } from './fixtures';

// A stopped run says why in words (words/failure-words): never "cut off" for a model call
// that failed or was cancelled; the CLI prints the same words on stderr.

function header(patch: Partial<RunHeader>): RunHeader {
  const { state, live } = sampleRun(2);
  return { ...buildRunView(state, live, false).header, ...patch };
}

const waitingStep: StepRow = { stepId: 3, checkpointId: 'c', label: 'before_model', at: 1, endAt: 1, checkpoints: 1, calls: [] };

describe('a stopped run in words', () => {
  it('a model call that failed says the failure, not "cut off"', () => {
    const refusedKey = header({ status: 'paused', failure: { kind: 'auth', status: 401, message: 'invalid x-api-key' } });
    assert.equal(stepHeadline(waitingStep, false, stoppedText(refusedKey)), 'Model call failed: The API key was refused');
    const offline = header({ status: 'paused', failure: { kind: 'network', message: 'connect ECONNREFUSED' } });
    assert.equal(stoppedText(offline), 'Model call failed: Could not reach the API');
    const refused = header({ status: 'paused', failure: { kind: 'refused', status: 400, message: 'tools.0.name: bad' } });
    assert.equal(stoppedText(refused), 'Model call failed: The request was refused: tools.0.name: bad');
  });

  it('a cancel says stopped; only a run whose window went away reads "cut off"', () => {
    assert.equal(stoppedText(header({ status: 'paused', statusReason: 'cancelled' })), 'Model call stopped: the run was cancelled');
    const gone = header({ status: 'running', active: false });
    assert.equal(stepHeadline(waitingStep, false, stoppedText(gone)), 'Model call cut off: no answer was recorded');
    assert.equal(stepHeadline(waitingStep, true, stoppedText(header({ status: 'running', active: true }))), 'Waiting for the model…');
  });

  it('a run stopped before failures were recorded (an older journal) says its recorded reason, not "cut off"', () => {
    const oldStyle = (status: NewRecord): RunHeader => {
      const records: NewRecord[] = [
        { ...runInput('r-old'), type: 'run' },
        checkpoint('c0', 0, 'run_start', 0),
        message(0, 0, 'user', 'task'),
        checkpoint('c1', 1, 'before_model', 1),
        status,
      ];
      return buildRunView(foldRecords(stampRecords(records, 1, 5)), new Map(), false).header;
    };
    const reason = 'model error (auth 401): Anthropic API auth: 401 invalid x-api-key';
    const paused = oldStyle({ type: 'status', status: 'paused', reason });
    assert.equal(paused.failure, undefined, 'the fixture records no failure, as older journals did');
    assert.equal(stepHeadline(waitingStep, false, stoppedText(paused)), `Model call failed: ${reason}`);
    const stopped = oldStyle({ type: 'status', status: 'paused', reason: 'turn limit reached (50)' });
    assert.equal(stoppedText(stopped), 'Model call stopped: turn limit reached (50)');
    // With no reason at all there is nothing to say but that no answer was recorded.
    assert.match(stepHeadline(waitingStep, false, stoppedText(oldStyle({ type: 'status', status: 'paused' }))), /cut off/);
  });

  it('an earlier step with no answer (a later step asked again) never reads "cut off", whatever the run did since', () => {
    for (const run of [header({ status: 'completed' }), header({ status: 'running', active: false }), header({ status: 'paused' })]) {
      const words = stepHeadline(waitingStep, false, stoppedText(run), false);
      assert.equal(words, 'No answer: this model call failed or was stopped; the next step asked again');
    }
    // Even while the run goes on: only its newest step waits for the model.
    const live = header({ status: 'running', active: true });
    assert.doesNotMatch(stepHeadline(waitingStep, true, stoppedText(live), false), /Waiting|cut off/);
  });

  it('a command that exited non-zero is its answer, not a red error; a failed call stays red', () => {
    assert.deepEqual(callLook('failed', false, false), { icon: 'info', tone: 'muted', text: 'ran; it exited non-zero', spin: false });
    assert.equal(callLook('failed', false, true).tone, 'error');
  });

  it('the conversation paints the newest steps, reaching back to a step picked in the tree', () => {
    const { state, live } = sampleRun(100);
    const run = buildRunView(state, live, false);
    const ids = (shown: number, reveal?: number) => visibleSteps(run, shown, reveal).map((s) => s.stepId);
    assert.deepEqual(
      ids(3),
      run.steps.slice(-3).map((s) => s.stepId),
    );
    const picked = run.steps[10]!.stepId;
    assert.equal(ids(3, picked)[0], picked, 'a picked older step is painted, with everything after it');
    assert.equal(ids(3, picked).at(-1), run.steps.at(-1)!.stepId);
  });

  it('the CLI prints the failure in the same words with what to type next', () => {
    const lines: string[] = [];
    const output = createRunOutput('quiet', { out: () => undefined, err: (t) => void lines.push(t) }, createToolRegistry());
    output.outcome({
      runId: 'r1',
      status: 'paused',
      reason: 'model error (auth 401): Anthropic API auth: 401 invalid x-api-key',
      failure: { kind: 'auth', status: 401, message: 'invalid x-api-key' },
    });
    assert.match(lines.join(''), /^run r1: paused: model error/);
    assert.match(
      lines.join(''),
      /\n {2}The API key was refused — invalid x-api-key \(HTTP 401\) \(set ANTHROPIC_API_KEY, then `agent-checkpoints resume --run r1`\)/,
    );
  });
});

describe('a step whose calls were gone past', () => {
  it('reads as not run in the tree (muted), never as a green pass or a red failure', () => {
    const run = buildRunView(sampleRun(2, { runId: 'a' }).state, new Map(), false);
    const mark = (notRun: boolean) => ({
      ...run,
      steps: run.steps.map((s) => ({ ...s, calls: s.calls.map((c) => ({ ...c, status: 'failed' as const, isError: false, notRun })) })),
    });
    const lookOf = (view: typeof run) => {
      const step = view.steps.find((s) => s.calls.length > 0)!;
      const row = flatten([view], new Set([rowKey.run('a')])).find((r) => r.key === rowKey.step('a', step.stepId))!;
      return describeRow(row, 0);
    };
    const declined = lookOf(mark(true));
    assert.deepEqual([declined.icon, declined.tone], ['circle-slash', 'muted']);
    assert.match(declined.title, /not run: a new instruction went instead/);
    assert.notEqual(lookOf(mark(false)).icon, 'circle-slash');
  });
});
