import { strict as assert } from 'node:assert';
import { hasExternalEffect, isExternalEffect, WORKSPACE_DELETE, WORKSPACE_WRITE, type LedgerEntry } from '../../../src/core/ledger/schema';
import { effectOf } from '../../../src/host/vscode/timeline/view-build';
import { BUILTIN_TOOLS } from '../../../src/core/tools/registry';

function entry(toolName: string, sideEffects: string[], extra: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    callId: `toolu_${toolName}`,
    stepId: 1,
    toolName,
    inputHash: 'h',
    status: 'succeeded',
    idempotency: 'non_idempotent',
    replayPolicy: 'ask',
    sideEffects,
    plannedAt: 1,
    compensation: 'not reversible',
    ...extra,
  };
}

describe('ledger: external effects', () => {
  const command = ["runs a process with the user's permissions; may change anything it can reach"];

  it('counts a started command, with its badge', () => {
    const started = entry('run_command', command, { startedAt: 2, finishedAt: 3 });
    assert.equal(hasExternalEffect(started), true);
    assert.deepEqual(effectOf(started), { effects: command, compensation: 'not reversible', reversible: false });
  });

  it('never counts a call that did not start: denied, or failed before it started', () => {
    const denied = entry('run_command', command, { status: 'failed', reason: 'denied by the user', finishedAt: 3 });
    const failedEarly = entry('run_command', command, { status: 'failed', error: 'bad input', finishedAt: 3 });
    for (const e of [denied, failedEarly, entry('run_command', command, { status: 'planned' })]) {
      assert.equal(hasExternalEffect(e), false, e.reason ?? e.error ?? e.status);
      assert.equal(effectOf(e), undefined);
    }
  });

  it('never counts workspace file writes, started or not, with or without intents', () => {
    assert.equal(hasExternalEffect(entry('write_file', [WORKSPACE_WRITE], { startedAt: 2 })), false);
    assert.equal(hasExternalEffect(entry('delete_file', [WORKSPACE_DELETE], { startedAt: 2, status: 'failed' })), false);
    assert.equal(isExternalEffect('fs.write'), false);
    assert.equal(isExternalEffect('network.post'), true);
  });

  it('agrees with every built-in tool: only run_command and the git commits reach beyond the files', () => {
    const external = BUILTIN_TOOLS.filter((t) => t.sideEffects.some(isExternalEffect)).map((t) => t.name);
    assert.deepEqual(external, ['run_command', 'git_commit', 'git_revert']);
  });
});
