import { strict as assert } from 'node:assert';
import type { LedgerEntry } from '../../../src/core/ledger/schema';
import { compensateExternalAction, effectsAfter, restoreSession, NOT_REVERSIBLE } from '../../../src/core/restore/session';
import type { RestoreDeps } from '../../../src/core/restore/types';
import { undoRestore } from '../../../src/core/restore/undo';
import type { NewRecord, StoredRecord } from '../../../src/core/store/records';
import { MemoryBlobs, MemoryJournal, MemoryLog, MemoryWorkspace, fixedClock, newId } from '../patches/fakes';

const budget = { turns: 0, maxTurns: 10, inputTokens: 0, outputTokens: 0, tokensUsed: 0, costUsd: 0 };
const entry = (callId: string, status: LedgerEntry['status'], extra: Partial<LedgerEntry> = {}): LedgerEntry => ({
  callId,
  stepId: 1,
  toolName: 'run_command',
  inputHash: 'h',
  status,
  idempotency: 'non_idempotent',
  replayPolicy: 'ask',
  sideEffects: ['process'],
  plannedAt: 0,
  ...(status === 'planned' || status === 'approved' ? {} : { startedAt: 1 }),
  compensation: 'git push --delete origin tmp',
  ...extra,
});
const checkpoint = (checkpointId: string): NewRecord => ({
  type: 'checkpoint',
  checkpointId,
  stepId: 1,
  label: 'tool_started',
  messageCount: 0,
  patchCount: 0,
  status: 'running',
  budget,
});

async function journalWith(records: NewRecord[]): Promise<MemoryJournal> {
  const journal = new MemoryJournal();
  await journal.append(records);
  return journal;
}

describe('restore/session', () => {
  it('lists only effects after the checkpoint, with compensation or "not reversible"', async () => {
    const journal = await journalWith([
      { type: 'ledger', entry: entry('done', 'succeeded') },
      checkpoint('cp1'),
      { type: 'ledger', entry: entry('later', 'started') },
      { type: 'ledger', entry: entry('later', 'succeeded') },
      { type: 'ledger', entry: entry('mail', 'started', { compensation: NOT_REVERSIBLE, toolName: 'send_mail' }) },
      { type: 'ledger', entry: entry('pure', 'started', { sideEffects: [] }) },
    ]);
    const ledger = [
      entry('done', 'succeeded'),
      entry('later', 'succeeded'),
      entry('mail', 'started', { compensation: NOT_REVERSIBLE, toolName: 'send_mail' }),
      entry('pure', 'started', { sideEffects: [] }),
    ];
    const effects = effectsAfter(journal.records, { ledger }, 'cp1');
    assert.deepEqual(
      effects.map((e) => [e.callId, e.reversible, e.compensation]),
      [
        ['later', true, 'git push --delete origin tmp'],
        ['mail', false, NOT_REVERSIBLE],
      ],
    );
  });

  it('restore_session appends restore then branch; undo branches back to the head it left', async () => {
    const journal = await journalWith([checkpoint('cp1'), checkpoint('cp2')]);
    const deps: RestoreDeps = {
      workspace: new MemoryWorkspace(),
      blobs: new MemoryBlobs(),
      journal,
      clock: fixedClock,
      log: new MemoryLog(),
      newId,
    };
    const result = await restoreSession(deps, journal.records, { ledger: [] }, 'cp1');
    const kinds = journal.records.slice(2).map((r) => r.type);
    assert.deepEqual(kinds, ['restore', 'branch']);
    const branch = journal.records[3] as StoredRecord & { type: 'branch' };
    assert.equal(branch.checkpointId, 'cp1');
    assert.equal(result.restore.branchId, branch.branchId);
    await undoRestore(deps, journal.records, result.restore);
    const last = journal.records[journal.records.length - 1]!;
    assert.equal(last.type === 'branch' && last.checkpointId, 'cp2');
  });

  it('compensate_external_action records a note and never mixes with files', async () => {
    const journal = new MemoryJournal();
    const reversible = await compensateExternalAction({ journal }, entry('x', 'succeeded'));
    assert.deepEqual(reversible, { compensation: 'git push --delete origin tmp', reversible: true });
    const none = await compensateExternalAction({ journal }, entry('y', 'succeeded', { compensation: '' }));
    assert.equal(none.reversible, false);
    assert.deepEqual(
      journal.records.map((r) => r.type),
      ['note', 'note'],
    );
    assert.match((journal.records[1] as { text: string }).text, /cannot be undone/);
  });
});
