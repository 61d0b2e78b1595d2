import { strict as assert } from 'node:assert';
import type { LedgerEntry } from '../../../src/core/ledger/schema';
import { earlierEffects } from '../../../src/core/runtime/recovery-note';
import type { NewRecord } from '../../../src/core/store/records';
import { EARLIER_EFFECTS } from '../../../src/core/store/resume-state';
import { MemoryCheckpointStore } from '../../support/memory-store';
import { checkpoint, runInput } from '../store/fixtures';

/** A small seeded generator, so a failure names a run that can be made again. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

const STATUSES: LedgerEntry['status'][] = ['succeeded', 'succeeded', 'succeeded', 'failed', 'started', 'uncertain'];
const KINDS: LedgerEntry['idempotency'][] = ['non_idempotent', 'non_idempotent', 'idempotent', 'conditional'];

function call(callId: string, stepId: number, status: LedgerEntry['status'], idempotency: LedgerEntry['idempotency']): NewRecord {
  const entry: LedgerEntry = {
    callId,
    stepId,
    toolName: 'run_command',
    inputHash: 'h'.repeat(8),
    status,
    idempotency,
    replayPolicy: idempotency === 'non_idempotent' ? 'never' : 'auto',
    sideEffects: ['runs a command'],
    plannedAt: 1,
    compensation: 'not reversible',
  };
  return { type: 'ledger', entry };
}

describe('resume: the earlier effects the recovery note names', () => {
  it('are the same from the resume state as from the whole ledger, whatever the run (60 random runs)', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = random(seed);
      const store = new MemoryCheckpointStore();
      const writer = await store.createRun(runInput(`run-${seed}`));
      const steps = 1 + Math.floor(next() * 30);
      for (let step = 1; step <= steps; step++) {
        const records: NewRecord[] = [];
        for (let c = Math.floor(next() * 4); c > 0; c--) {
          const id = `s${step}c${c}`;
          const kind = KINDS[Math.floor(next() * KINDS.length)]!;
          records.push(call(id, step, 'planned', kind), call(id, step, STATUSES[Math.floor(next() * STATUSES.length)]!, kind));
        }
        await writer.append([...records, checkpoint(`k${step}`, step, 'tool_finished', 0)]);
      }
      await writer.close();
      const whole = await store.readRun(`run-${seed}`);
      const resumed = await store.readResumeState(`run-${seed}`);
      for (const lastCompleted of [resumed.stepId, resumed.stepId - 1]) {
        const want = earlierEffects(whole.ledger, lastCompleted).map((e) => e.callId);
        assert.deepEqual(
          earlierEffects(resumed.ledger, lastCompleted).map((e) => e.callId),
          want,
          `seed ${seed}, step ${lastCompleted}`,
        );
        assert.ok(want.length <= EARLIER_EFFECTS);
      }
    }
  });
});
